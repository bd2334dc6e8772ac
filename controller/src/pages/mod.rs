//! The lab and the election pages: what the controller's HTTP port (the
//! one serving Prometheus `/metrics`) shows a browser.
//!
//! * `/`: the lab, a form that starts an election and opens its page
//!   (`POST /lab/start`), and one that checks a small election on every
//!   schedule and steps through its shortest counterexample (`POST
//!   /lab/check`) or lets the student choose each step (`POST
//!   /lab/explore`, `explore.rs`); see `lab.rs` for how its calls are
//!   guarded.
//! * `/elections`: the index of recent elections, most recent first, each
//!   linking to its page.
//! * `/elections/{id}`: one election: its verdict, its metrics against the
//!   literature's bound, a kept leadership's terms, timeline and failovers,
//!   and its space-time diagram (when the election was started with
//!   `diagram` or `diagram_options`) stepped through event by event (each
//!   send, arrival and change of state: a "now" cursor, messages in flight
//!   half drawn) beside its topology coloured by each node's state, and a
//!   panel describing the message under the pointer or pinned by a click.
//!   A page of an election still running reads `record.json` every second
//!   and shows what changed (a kept leadership's new terms and failovers,
//!   its nodes' beliefs on the topology); a running kept leadership's page
//!   breaks it on request (`POST /lab/act`: crash, recover, cut off, drop
//!   the next message of a kind on a link, clear its faults, stop), and shows its diagram so far when one was asked
//!   for. It reloads once the election ends, diagram included.
//! * `/compare/{a}/{b}`: two elections one above the other (see
//!   `compare.rs`), on one time scale, stepped together on one time line.
//! * `/elections/{id}/record.json`: the record as JSON, without the diagram
//!   (its `diagram_drawn` counts the drawings).
//! * `/elections/{id}/diagram.svg`: the diagram alone; a running kept
//!   leadership's so far, redrawn while it runs (its page swaps it in).
//!
//! Everything is inline (HTML, CSS, SVG, script): no external asset, so
//! the page works offline and from behind a port-forward. The port serves
//! every route behind one guard ([`ringleader_node::observe::guard`]): only
//! a `Host` the server is meant to be reached by (else 421), and with
//! `auth.protect_reads` a token ([`read_check`]) or its session cookie, like
//! `/metrics`. The lab's calls change state and take the controller's token.
//!
//! Every response carries [`policy`] as its `Content-Security-Policy`: each
//! page's one script and the one style sheet run by their hashes (the same text on
//! every page: an election's id and state reach the script as `data-`
//! attributes of `<body>`), the page's own origin may be fetched, and nothing else
//! loads, runs or frames the pages, so a record's text that slipped through
//! the escaping still could not run.

mod compare;
mod election;
mod explore;
mod lab;
mod lab_page;

use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::elections::Elections;
pub use election::{MAX_LISTED, render};
use election::{diagram_svg, index, page, record_json};
pub use lab::{LAB_HEADER, Lab, LabAction, LabCheck, LabStart};

/// What the election pages read: the store, and whether the controller asks for a token (their
/// buttons that change state then ask for it).
#[derive(Clone, Debug)]
struct Pages {
    elections: Arc<Elections>,
    token_required: bool,
}

/// The routes of the pages, over the store `elections`, and the lab's calls through `lab`.
pub fn router(elections: Arc<Elections>, lab: Lab) -> axum::Router {
    let token_required = lab.token_required;
    let lab_routes = axum::Router::new()
        .route("/", get(lab_page::page))
        .route("/lab/start", axum::routing::post(lab::start))
        .route("/lab/act", axum::routing::post(lab::act))
        .route("/lab/cluster", get(lab::cluster))
        .route("/lab/check", axum::routing::post(lab::check))
        .route("/lab/explore", axum::routing::post(explore::explore))
        .layer(axum::extract::DefaultBodyLimit::max(lab::MAX_BODY))
        .with_state(lab);
    let pages = Pages { elections, token_required };
    axum::Router::new()
        .route("/elections", get(index))
        .route("/elections/{id}", get(page))
        .route("/elections/{id}/record.json", get(record_json))
        .route("/elections/{id}/diagram.svg", get(diagram_svg))
        .route("/compare/{a}/{b}", get(compare::page))
        .with_state(pages)
        .merge(lab_routes)
        .layer(axum::middleware::map_response(with_policy))
}

/// What the HTTP port asks of a read under `auth` ([`ringleader_node::observe::guard`]): with
/// `auth.protect_reads`, the controller's token or its read-only token; otherwise nothing.
pub fn read_check(auth: &ringleader_node::auth::Auth) -> Option<ringleader_node::observe::guard::TokenCheck> {
    let auth = auth.clone();
    auth.protect_reads.then(|| {
        std::sync::Arc::new(move |t: &str| auth.token.iter().chain(&auth.read_token).any(|s| s.matches(t)))
            as ringleader_node::observe::guard::TokenCheck
    })
}

/// The pages' `Content-Security-Policy` (see the module docs).
pub fn policy() -> &'static str {
    static POLICY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        format!(
            "default-src 'none'; script-src {}; style-src {}; img-src data:; connect-src 'self'; \
             base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            [election::SCRIPT, lab_page::LAB_SCRIPT, compare::SCRIPT].map(hash_source).join(" "),
            hash_source(STYLE)
        )
    })
}

/// The `'sha256-…'` source that allows an inline element whose text is `text`.
fn hash_source(text: &str) -> String {
    use base64::Engine as _;
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest.as_ref()))
}

async fn with_policy(mut response: Response) -> Response {
    if let Ok(value) = HeaderValue::from_str(policy()) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn not_found(id: &str) -> Response {
    let body = format!(
        "{HEAD}<title>No election · ringleader</title></head><body><nav><a href=\"/elections\">All elections</a></nav>\
         <h1>No election <code>{}</code></h1><p>The controller keeps the most recent elections only \
         (<code>max_elections</code>); see the index.</p></body></html>",
        escape(id)
    );
    (StatusCode::NOT_FOUND, Html(body)).into_response()
}

/// The pages' style sheet (a macro, for [`HEAD`] to inline it and [`STYLE`] to name it).
macro_rules! style {
    () => {
        r#"
body { font-family: sans-serif; margin: 1em 1.5em; color: #222; }
[hidden] { display: none !important; }
input, select, button { font: inherit; font-size: 0.95em; max-width: 100%; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; font-size: 0.92em; }
th { background: #f4f4f4; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.state { font-weight: bold; }
.ok { color: #176117; } .bad { color: #b00; } .running { color: #a65f00; }
.controls { margin: 0.6em 0; display: flex; gap: 0.4em; align-items: center; flex-wrap: wrap; }
.controls button { font-size: 1em; min-width: 2.4em; }
#slider { width: 22em; }
.diagram { overflow-x: auto; }
.diagram svg { max-width: 100%; height: auto; border: 1px solid #eee; box-sizing: border-box; }
.diagram .msg { cursor: pointer; }
.diagram .msg:hover, .diagram .msg.pinned { stroke-width: 3; filter: drop-shadow(0 0 2px #fc0); }
.diagram .msg.flight { opacity: 0.8; }
.diagram .msg.flight .swallowed, .diagram .msg.flight .ring-edge { display: none; }
.diagram .label { pointer-events: none; }
.diagram .row.is-down text { fill: #c00; text-decoration: line-through; }
.diagram .row.is-cut text { fill: #8a4b08; font-style: italic; }
.diagram .row.leading text { font-weight: bold; }
.topology-legend .legend-item { display: inline-flex; align-items: center; gap: 0.3em; margin-right: 0.9em; white-space: nowrap; }
.stage { display: flex; gap: 1em; align-items: flex-start; flex-wrap: wrap; }
.stage .info { flex: 1; min-width: 16em; }
.topology { width: 300px; font-size: 0.85em; color: #444; }
.topology svg { border: 1px solid #eee; background: #fff; }
.topo-node { cursor: pointer; }
.topo-node.selected circle { stroke-width: 4; stroke: #000; }
.info { min-height: 2.6em; background: #fafafa; border: 1px solid #eee; padding: 0.4em 0.7em; font-size: 0.92em; }
.stack .panel { border-top: 1px solid #ddd; margin-top: 0.6em; }
.stack .panel h2 { font-size: 1.1em; margin: 0.4em 0 0.2em; }
.stack .panel .state { margin: 0.2em 0; }
.so-far { font-weight: normal; font-size: 0.9em; color: #444; margin-left: 0.6em; }
.beside { display: grid; grid-template-columns: 300px minmax(0, 1fr); gap: 0.8em; align-items: start; }
.beside .info { min-width: 0; font-size: 0.85em; margin-top: 0.4em; }
code { background: #f4f4f4; padding: 0 3px; font-family: monospace, monospace; }
form.lab { display: grid; grid-template-columns: minmax(0, 1fr) minmax(12em, 24em); gap: 0.35em 1em; align-items: start; max-width: 76em; }
form.lab > label, form.lab > fieldset, form.lab > p { grid-column: 1; min-width: 0; margin: 0; }
form.lab > .error, form.lab > .errors { grid-column: 2; }
form.lab > p.submit { grid-column: 1 / -1; }
form.lab fieldset { border: 1px solid #ddd; display: flex; flex-wrap: wrap; gap: 0.3em 1em; min-width: 0; margin: 0; }
form.lab .fault-row { display: flex; flex-wrap: wrap; gap: 0.3em 0.6em; align-items: baseline; flex-basis: 100%; }
form.lab input[type=number] { width: 6em; }
form.lab input[name=ids] { width: 20em; }
.errors { display: flex; flex-direction: column; gap: 0.2em; }
.error { color: #b00; font-size: 0.92em; }
form.lab .error:not(:empty) { background: #fff0f0; border-left: 3px solid #b00; padding: 0.1em 0.4em; }
.status.refused { color: #b00; font-weight: bold; }
.cluster { border: 1px solid #ddd; padding: 0 0.8em; max-width: 76em; margin: 0.6em 0; display: flex; flex-wrap: wrap; gap: 0 1em; align-items: baseline; }
.cluster h2 { font-size: 1em; margin: 0.4em 0; }
.cluster p { margin: 0.4em 0; }
.cluster ul { display: flex; flex-wrap: wrap; gap: 0 1em; list-style: none; padding: 0; margin: 0.4em 0; }
.cluster .down { color: #b00; font-weight: bold; }
.cluster .up { color: #176117; }
.check-body { display: grid; grid-template-columns: minmax(12em, 20em) minmax(0, 1fr); gap: 1em; align-items: start; }
#check-steps { max-height: 75vh; overflow-y: auto; margin: 0; padding-left: 2.2em; }
#check-steps li.done { color: #555; }
#check-steps li.now { font-weight: bold; color: #000; }
#explore-nodes td.variables { max-width: 36em; }
#explore-nodes td.variables code { white-space: normal; overflow-wrap: anywhere; }
#check-diagram svg { max-width: 100%; height: auto; border: 1px solid #eee; }
"#
    };
}

/// The text of the pages' one `<style>` element, allowed by its hash.
const STYLE: &str = style!();

const HEAD: &str = concat!(
    r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><style>"#,
    style!(),
    "</style>"
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ElectionRecord, Mode, State as RecordState};

    fn record() -> ElectionRecord {
        ElectionRecord {
            n: 3,
            k: 3,
            state: RecordState::Finished,
            ..ElectionRecord::blank("e".into(), "as-far", Mode::Simulated)
        }
    }

    /// The lab's calls through the router: one without the lab header is forbidden; an unknown
    /// action, a crash of no node, a drop on no link (one node), a start with n = 1 and a stop of an unknown election are
    /// refused with the API's code and the field named, as JSON lines.
    #[tokio::test]
    async fn lab_calls_are_refused_by_field() {
        use tower::ServiceExt as _;
        let config = crate::config::ControllerConfig::default();
        let cluster = crate::cluster::Cluster::start(&config, &Default::default(), None).await.unwrap();
        let elections = Elections::with_history(cluster, config, None, Vec::new());
        let lab = Lab { service: crate::api::ControllerService::new(elections.clone()), token_required: false };
        let app = router(elections, lab);
        let call = |path: &str, body: &str, lab_header: bool| {
            let mut r = axum::http::Request::post(path)
                .header(header::HOST, "127.0.0.1:9464")
                .header(header::CONTENT_TYPE, "application/json");
            if lab_header {
                r = r.header(LAB_HEADER, "1");
            }
            let request = r.body(axum::body::Body::from(body.to_string())).unwrap();
            let app = app.clone();
            async move {
                let response = app.oneshot(request).await.unwrap();
                let status = response.status();
                let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
                let text = String::from_utf8(body.to_vec()).unwrap();
                assert!(text.ends_with('\n'), "a JSON line: {text}");
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                (status, v["code"].as_str().unwrap_or("").to_string(), v["field"].as_str().unwrap_or("").to_string())
            }
        };
        let refused = |s: StatusCode, code: &str, field: &str| (s, code.to_string(), field.to_string());
        assert_eq!(
            call("/lab/act", r#"{"action":"stop"}"#, false).await,
            refused(StatusCode::FORBIDDEN, "PERMISSION_DENIED", "")
        );
        assert_eq!(
            call("/lab/act", r#"{"action":"explode"}"#, true).await,
            refused(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "action")
        );
        assert_eq!(
            call("/lab/act", r#"{"action":"crash"}"#, true).await,
            refused(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "nodes")
        );
        assert_eq!(
            call("/lab/act", r#"{"action":"drop","nodes":["node-0"],"kind":"elect"}"#, true).await,
            refused(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "nodes")
        );
        assert_eq!(
            call("/lab/act", r#"{"action":"stop","election_id":"e9"}"#, true).await,
            refused(StatusCode::NOT_FOUND, "NOT_FOUND", "election_id")
        );
        assert_eq!(
            call("/lab/start", r#"{"algorithm":"as-far","size":1,"simulated":true}"#, true).await,
            refused(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "size")
        );
    }

    /// The texts of the `<tag>` elements of `html`.
    fn inline(html: &str, tag: &str) -> Vec<String> {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        html.split(&open).skip(1).filter_map(|rest| rest.split_once(&close)).map(|(text, _)| text.to_string()).collect()
    }

    /// Every response of the pages (the lab, the index, an election's page, its JSON, its diagram
    /// alone, two side by side, a missing election) carries one Content-Security-Policy that loads nothing from elsewhere, runs no script but the
    /// page's own and may not be framed, and the page's inline script and style sheet are allowed
    /// by their hashes, so the page still works under it. Before, the pages sent no policy.
    #[tokio::test]
    async fn every_page_carries_a_policy_its_inline_script_and_style_meet() {
        use tower::ServiceExt as _;
        let config = crate::config::ControllerConfig::default();
        let cluster = crate::cluster::Cluster::start(&config, &Default::default(), None).await.unwrap();
        let drawn = ElectionRecord {
            id: "e1".into(),
            diagram_svg: Some("<svg><line class=\"msg\" data-step=\"0\"/></svg>".into()),
            ..record()
        };
        let elections = Elections::with_history(cluster, config, None, vec![drawn]);
        let lab = Lab { service: crate::api::ControllerService::new(elections.clone()), token_required: false };
        let app = router(elections, lab);
        let mut policies = Vec::new();
        let mut pages = Vec::new();
        for (path, status) in [
            ("/", StatusCode::OK),
            ("/elections", StatusCode::OK),
            ("/elections/e1", StatusCode::OK),
            ("/elections/e1/record.json", StatusCode::OK),
            ("/elections/e1/diagram.svg", StatusCode::OK),
            ("/compare/e1/e1", StatusCode::OK),
            ("/compare/e1/nope", StatusCode::NOT_FOUND),
            ("/elections/nope", StatusCode::NOT_FOUND),
            ("/elections/nope/diagram.svg", StatusCode::NOT_FOUND),
        ] {
            let request = axum::http::Request::get(path).body(axum::body::Body::empty()).unwrap();
            let response = app.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), status, "{path}");
            let policy =
                response.headers().get(header::CONTENT_SECURITY_POLICY).map(|v| v.to_str().unwrap().to_string());
            policies.push(policy.unwrap_or_else(|| panic!("{path}: no Content-Security-Policy")));
            if path == "/elections/e1/diagram.svg" {
                assert_eq!(response.headers()[header::CONTENT_TYPE], "image/svg+xml");
                let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
                assert!(body.starts_with(b"<svg>"), "the diagram alone");
            } else if path == "/elections/e1" || path == "/" || path == "/compare/e1/e1" {
                let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
                pages.push(String::from_utf8(body.to_vec()).unwrap());
            }
        }
        assert!(policies.iter().all(|p| *p == policies[0]), "{policies:?}");
        let directives: Vec<&str> = policies[0].split(';').map(str::trim).collect();
        for wanted in ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "connect-src 'self'"] {
            assert!(directives.contains(&wanted), "{wanted} in {directives:?}");
        }
        let directive = |name: &str| directives.iter().find(|d| d.starts_with(name)).map(|d| d.to_string());
        let script_src = directive("script-src ").expect("a script-src");
        let style_src = directive("style-src ").expect("a style-src");
        assert!(!policies[0].contains("unsafe"), "{}", policies[0]);
        for page in &pages {
            let (scripts, styles) = (inline(page, "script"), inline(page, "style"));
            assert_eq!((scripts.len(), styles.len()), (1, 1), "{page}");
            assert!(script_src.contains(&hash_source(&scripts[0])), "{script_src} does not allow the page's script");
            assert!(style_src.contains(&hash_source(&styles[0])), "{style_src} does not allow the page's style");
            assert!(!page.contains(" style=") && !page.contains(" onclick="), "no inline style or handler attributes");
        }
    }
}
