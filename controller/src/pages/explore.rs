//! `POST /lab/explore`: the checker by hand, the lab's "Explore by hand"
//! for elections of at most four nodes. The page sends the election (the
//! check form's fields) and the path of choices taken so far; the answer is
//! where that path ends ([`ringleader_check::explore`]): the steps taken and
//! those that may come next in words, every node's state and belief, each
//! property and whether it holds. The call is stateless (the page keeps the
//! path; "back" sends it without its last choice) and bounded (four nodes,
//! [`ringleader_check::MAX_PATH`] choices, replayed on a blocking thread in
//! milliseconds) and admitted: at most `controller.max_concurrent_explores`
//! replay at once (half the cores by default), one more waits
//! [`crate::check::EXPLORE_WAIT`] for a place and is then refused 429
//! RESOURCE_EXHAUSTED naming the setting, so a flood of explores takes at
//! most those cores from the embedded nodes' LIVE elections.
//!
//! Guarded as every lab call (see `lab.rs`), and authorized as
//! CheckAlgorithm: exploring is checking one step at a time, so it takes
//! what a check takes, the controller's full token once `auth.token` is set
//! (the read-only token is refused). The API's own authorization answers,
//! so its refusals are counted and logged with the other calls' (as
//! `LabExplore`).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ringleader_check::{CheckAsk, Exploration, KeptCheck};
use serde::Deserialize;

use super::lab::{Lab, Refusal, request};

/// What the explorer sends: the check form's election, and the choices taken so far.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct LabExplore {
    /// Catalogue name.
    algorithm: String,
    /// Nodes (0: 3; at most four).
    n: u32,
    /// The ids in ring order (empty: 1..=n); they may repeat (an anonymous ring).
    ids: Vec<u64>,
    /// Links may reorder messages; unticked, every link is FIFO (the form's one link model,
    /// whatever the algorithm assumes).
    any_order: bool,
    /// The kept leadership (failure-tolerant algorithms).
    kept: bool,
    /// Crashes, losses and partitions a schedule may hold (kept only).
    crashes: u32,
    /// Messages lost.
    losses: u32,
    /// Partitions.
    partitions: u32,
    /// The choices taken, each an index into the next steps of the state reached.
    path: Vec<u32>,
    /// Instead of `path`: the steps to take, in words (a counterexample's, as the checker says
    /// them); the answer's `path` holds the choices they are.
    follow: Vec<String>,
}

impl LabExplore {
    /// The election as CheckAlgorithm asks it (the same detector and defaults).
    fn ask(&self) -> CheckAsk {
        CheckAsk {
            algorithm: self.algorithm.clone(),
            n: self.n,
            ids: self.ids.clone(),
            any_order: self.any_order,
            fifo: !self.any_order,
            kept: self.kept,
            crashes: self.crashes,
            losses: self.losses,
            partitions: self.partitions,
            detector: KeptCheck::default().detector,
            ..CheckAsk::default()
        }
    }
}

/// `POST /lab/explore`: where a [`LabExplore`]'s path ends, as JSON (see
/// [`answer`]), or a refusal naming the field at fault (`n` beyond four
/// nodes, `path` at a choice its state does not have).
pub(super) async fn explore(State(lab): State<Lab>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    let request = match request::<LabExplore>(&lab, &headers, &body) {
        Ok(r) => r,
        Err(refusal) => return refusal.into_response(),
    };
    // Exploring takes what a check takes: the full token, when one is set.
    if let Err(status) = lab.service.authorize(&request, "LabExplore", ringleader_node::auth::Access::Write) {
        return Refusal::of_status(&status).into_response();
    }
    // Admitted among `max_concurrent_explores`, and replayed on a blocking thread that holds the
    // place until it ends (even if the caller has gone), never on an async worker.
    let place = match lab.service.admit_explore().await {
        Ok(place) => place,
        Err(status) => return Refusal::of_status(&status).into_response(),
    };
    let form = request.into_inner();
    let ask = form.ask();
    let (algorithm, path, follow) = (form.algorithm, form.path, form.follow);
    let replay = move || {
        let path = if follow.is_empty() { Ok(path) } else { ringleader_check::path_of_words(&ask, &follow) };
        let x = path.and_then(|path| ringleader_check::explore(&ask, &path).map(|x| (path, x)));
        drop(place);
        x
    };
    match tokio::task::spawn_blocking(replay).await {
        Ok(Ok((path, x))) => {
            let body = answer(&algorithm, &path, &x);
            ([(header::CONTENT_TYPE, "application/json")], format!("{body}\n")).into_response()
        }
        Ok(Err(r)) => {
            let status = tonic::Status::from(crate::error::RequestError::from(r));
            Refusal::of_status(&status).into_response()
        }
        Err(e) => Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", "", format!("the explorer failed: {e}"))
            .into_response(),
    }
}

/// The JSON of where a path ends: its `path` (the choices), `taken` and
/// `choices` (the steps in words; choice `i` is `choices[i]`), `nodes` (each
/// `position`, `id`, `state`, `belief`, its `variables` and whether the
/// last step `changed` it), `inFlight` (the messages in flight, in words),
/// `properties` (each `name`, whether it `holds`, and the step it broke at,
/// `brokenSince`), `error`, `final` and `fifo`.
fn answer(algorithm: &str, path: &[u32], x: &Exploration) -> serde_json::Value {
    let nodes: Vec<serde_json::Value> = x
        .nodes
        .iter()
        .map(|n| {
            serde_json::json!({
                "position": n.position, "id": n.id, "state": n.state, "belief": n.belief, "changed": n.changed,
                "variables": n.variables,
            })
        })
        .collect();
    let properties: Vec<serde_json::Value> = x
        .properties
        .iter()
        .map(|p| serde_json::json!({ "name": p.name, "holds": p.holds, "brokenSince": p.broken_since }))
        .collect();
    serde_json::json!({
        "algorithm": algorithm,
        "path": path,
        "taken": x.taken,
        "choices": x.choices,
        "nodes": nodes,
        "properties": properties,
        "error": x.error,
        "final": x.is_final,
        "fifo": x.fifo,
        "inFlight": x.in_flight,
    })
}

#[cfg(test)]
mod tests {
    use axum::http::header;
    use ringleader_node::auth::{Auth, Secret};
    use serde_json::Value;
    use tower::ServiceExt as _;

    use super::super::{LAB_HEADER, Lab, router};
    use crate::elections::Elections;

    /// The pages' router over a controller whose API asks for `auth` (its tokens).
    async fn app(auth: Auth) -> axum::Router {
        app_and_service(auth, crate::config::ControllerConfig::default()).await.0
    }

    /// The pages' router over a controller set as `config` whose API asks for `auth`, and its service.
    async fn app_and_service(
        auth: Auth,
        config: crate::config::ControllerConfig,
    ) -> (axum::Router, crate::api::ControllerService) {
        let cluster = crate::cluster::Cluster::start(&config, &Default::default(), None).await.unwrap();
        let elections = Elections::with_history(cluster, config, None, Vec::new());
        let token_required = auth.token.is_some();
        let service = crate::api::ControllerService::with_auth(elections.clone(), auth);
        (router(elections, Lab { service: service.clone(), token_required }), service)
    }

    /// POST `body` to /lab/explore as the lab page does (with `bearer` as its token): status and JSON.
    async fn call(app: &axum::Router, body: &str, bearer: Option<&str>) -> (u16, Value) {
        let mut r = axum::http::Request::post("/lab/explore")
            .header(header::HOST, "127.0.0.1:9464")
            .header(header::CONTENT_TYPE, "application/json")
            .header(LAB_HEADER, "1");
        if let Some(token) = bearer {
            r = r.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let response = app.clone().oneshot(r.body(axum::body::Body::from(body.to_string())).unwrap()).await.unwrap();
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    /// Through the router: kept bully on 3 nodes with a crash, after choosing id 2's start, says
    /// so in words, offers id 1's and id 3's starts next, marks id 2 (and only it) changed, and
    /// every kept property holds; four nodes are explored, five refused naming `n`, a choice its
    /// state lacks naming `path`, a fault without kept naming the fault (as CheckAlgorithm does).
    #[tokio::test]
    async fn a_path_ends_where_its_choices_lead_and_bad_ones_are_refused() {
        let app = app(Auth::default()).await;
        let bully = r#""algorithm":"bully","kept":true,"crashes":1"#;
        let (status, x) = call(&app, &format!(r#"{{{bully},"n":3,"path":[1]}}"#), None).await;
        assert_eq!(status, 200, "{x}");
        assert_eq!(x["taken"], serde_json::json!(["id 2 wakes up and starts"]));
        assert_eq!(x["choices"], serde_json::json!(["id 1 wakes up and starts", "id 3 wakes up and starts"]));
        let changed: Vec<&Value> = x["nodes"].as_array().unwrap().iter().filter(|n| n["changed"] == true).collect();
        assert_eq!((changed.len(), &changed[0]["id"]), (1, &Value::from(2)), "{x}");
        assert!(x["properties"].as_array().unwrap().iter().all(|p| p["holds"] == true && p["brokenSince"].is_null()));
        assert_eq!((&x["final"], &x["error"]), (&Value::Bool(false), &Value::Null));
        assert_eq!(call(&app, &format!(r#"{{{bully},"n":4}}"#), None).await.0, 200);
        let refused = |(status, v): (u16, Value)| (status, v["code"].clone(), v["field"].clone());
        let named = |status: u16, code: &str, field: &str| (status, Value::from(code), Value::from(field));
        let five = call(&app, &format!(r#"{{{bully},"n":5}}"#), None).await;
        assert_eq!(refused(five), named(400, "INVALID_ARGUMENT", "n"));
        let (status, v) = call(&app, &format!(r#"{{{bully},"n":3,"path":[1,5]}}"#), None).await;
        assert_eq!(refused((status, v.clone())), named(400, "INVALID_ARGUMENT", "path"));
        assert_eq!(v["message"], "path: path[1] is 5, but step 2 has 2 choices (0 to 1)");
        let one_shot = call(&app, r#"{"algorithm":"bully","crashes":1}"#, None).await;
        assert_eq!(refused(one_shot), named(412, "FAILED_PRECONDITION", "crashes"));
    }

    /// The form's link model decides: as-far (which assumes nothing of order) explored with
    /// "links may reorder messages" unticked offers one delivery per link, the oldest, and the
    /// answer says its links are FIFO; ticked, every message in flight on a link may arrive next.
    /// A counterexample's steps in words (`follow`) open where they lead, its `path` the choices.
    /// Before, unticked still reordered (the algorithm's own assumption decided).
    #[tokio::test]
    async fn the_forms_link_model_decides_and_words_are_followed() {
        let app = app(Auth::default()).await;
        // The most deliveries offered on one link (a receiver and a sender) along the first choices.
        let per_link = |x: &Value| {
            let mut links = std::collections::HashMap::new();
            for c in x["choices"].as_array().unwrap().iter().filter_map(Value::as_str) {
                if let Some((to, rest)) = c.split_once(" receives ") {
                    let from = rest.rsplit_once(" from ").map_or("", |(_, f)| f.split(',').next().unwrap_or(""));
                    *links.entry((to.to_string(), from.to_string())).or_insert(0) += 1;
                }
            }
            links.into_values().max().unwrap_or(0)
        };
        let mut most = [0usize; 2];
        for (k, any_order) in [false, true].into_iter().enumerate() {
            let mut path: Vec<u32> = Vec::new();
            for _ in 0..40 {
                let body = serde_json::json!({ "algorithm": "as-far", "n": 4, "any_order": any_order, "path": path });
                let (status, x) = call(&app, &body.to_string(), None).await;
                assert_eq!(status, 200, "{x}");
                assert_eq!(x["fifo"], Value::Bool(!any_order));
                assert_eq!(x["path"], serde_json::json!(path));
                most[k] = most[k].max(per_link(&x));
                let n = x["choices"].as_array().unwrap().len();
                if n == 0 {
                    break;
                }
                // The last choice: deliveries come after the starts, the latest sends last.
                path.push(n as u32 - 1);
            }
        }
        assert_eq!(most, [1, 2], "one delivery per link on FIFO links, more where links reorder");
        let body = serde_json::json!({ "algorithm": "stages", "n": 3, "any_order": true, "path": [0, 1, 2] });
        let (_, x) = call(&app, &body.to_string(), None).await;
        let follow = serde_json::json!({ "algorithm": "stages", "n": 3, "any_order": true, "follow": x["taken"] });
        let (status, y) = call(&app, &follow.to_string(), None).await;
        assert_eq!((status, &y["path"], &y["taken"]), (200, &serde_json::json!([0, 1, 2]), &x["taken"]), "{y}");
        let wrong = serde_json::json!({ "algorithm": "stages", "n": 3, "follow": ["id 9 wakes up and starts"] });
        let (status, v) = call(&app, &wrong.to_string(), None).await;
        assert_eq!((status, v["field"].as_str()), (400, Some("follow")), "{v}");
    }

    /// With `auth.token` set, the explorer takes what CheckAlgorithm takes: no token is
    /// UNAUTHENTICATED, the read-only token PERMISSION_DENIED, the full token explores.
    #[tokio::test]
    async fn the_explorer_takes_a_checks_token() {
        let auth = Auth {
            token: Some(Secret::new("full-token-1")),
            read_token: Some(Secret::new("read-token-1")),
            ..Auth::default()
        };
        let app = app(auth).await;
        let body = r#"{"algorithm":"as-far","n":3}"#;
        let code = |(status, v): (u16, Value)| (status, v["code"].as_str().unwrap_or("").to_string());
        assert_eq!(code(call(&app, body, None).await), (401, "UNAUTHENTICATED".to_string()));
        assert_eq!(code(call(&app, body, Some("read-token-1")).await), (403, "PERMISSION_DENIED".to_string()));
        assert_eq!(code(call(&app, body, Some("wrong-token-1")).await).0, 403);
        assert_eq!(code(call(&app, body, Some("full-token-1")).await).0, 200);
    }

    /// Explores are admitted: with `max_concurrent_explores = 1` and its one place taken (an
    /// explore replaying), the next waits `EXPLORE_WAIT` and is refused 429 RESOURCE_EXHAUSTED
    /// naming `controller.max_concurrent_explores`; once the place is free it explores. Before,
    /// every explore ran at once, however many (200 of them took a LIVE election from 43 ms to
    /// 1,257 ms).
    #[tokio::test]
    async fn an_explore_beyond_max_concurrent_explores_is_refused() {
        let config = crate::config::ControllerConfig { max_concurrent_explores: 1, ..Default::default() };
        let (app, service) = app_and_service(Auth::default(), config).await;
        let body = r#"{"algorithm":"as-far","n":3}"#;
        let place = service.admit_explore().await.unwrap();
        let asked = std::time::Instant::now();
        let (status, v) = call(&app, body, None).await;
        assert_eq!((status, v["code"].as_str()), (429, Some("RESOURCE_EXHAUSTED")), "{v}");
        assert!(asked.elapsed() >= crate::check::EXPLORE_WAIT, "waited for a place first");
        let message = v["message"].as_str().unwrap();
        assert!(message.starts_with("max_concurrent_explores: 1 explore is replaying"), "{message}");
        assert!(message.contains("(controller.max_concurrent_explores)"), "{message}");
        assert_eq!(v["field"], "max_concurrent_explores");
        drop(place);
        assert_eq!(call(&app, body, None).await.0, 200);
    }
}
