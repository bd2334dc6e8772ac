//! Who may read the HTTP port (`/metrics`, and on the controller the pages
//! and the lab): one layer in front of every route.
//!
//! * **The Host rule.** A request is answered only when its `Host` names the
//!   server as it is meant to be reached: `localhost`, a loopback address,
//!   the listen address (any IP address when it listens on all of them: a
//!   pod is scraped by its IP), or a name in `telemetry.http_hosts`. A
//!   page whose DNS name an attacker rebinds to 127.0.0.1 sends its own name
//!   as the Host, so it is refused 421 (Misdirected Request) before any
//!   route runs, whatever the route: reads included.
//! * **Protected reads.** With `auth.protect_reads` every request needs
//!   the token (`auth.token`) or the read-only one (`auth.read_token`): as
//!   `Authorization: Bearer <token>` (a Prometheus scraper's
//!   `authorization.credentials_file`, curl), or as this port's session
//!   cookie, which a browser gets by presenting the token once to `POST
//!   /session` (the sign-in page a browser is shown instead of a refused
//!   page does it). The cookie (`ringleader-read-<port>`, HttpOnly,
//!   SameSite=Strict) is random per process and allows reads only: a call
//!   that changes state still takes the full token, as before. A restart
//!   ends every session. Missing credentials are 401, wrong ones 403.

use std::io::Read as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

/// The path a browser presents its token to, for the session cookie.
pub const SESSION_PATH: &str = "/session";
/// The sign-in page's script (served without credentials: it holds nothing).
pub const SIGN_IN_SCRIPT_PATH: &str = "/session.js";

/// Checks a presented bearer token: does it allow reads?
pub type TokenCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A [`TokenCheck`] in the telemetry settings (compared by identity).
#[derive(Clone)]
pub struct ReadCheck(pub TokenCheck);

impl std::fmt::Debug for ReadCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadCheck")
    }
}

impl PartialEq for ReadCheck {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ReadCheck {}

/// The rules of one HTTP port (see the module docs).
#[derive(Clone, Default)]
pub struct HttpGuard {
    /// Names the port answers to besides localhost and its addresses (lower case, no port).
    names: Vec<String>,
    /// The address it listens on (`None`: loopback only is known).
    listen: Option<IpAddr>,
    /// With protected reads: who may read, and the session cookie's name and value.
    readers: Option<Readers>,
}

#[derive(Clone)]
struct Readers {
    check: TokenCheck,
    cookie_name: String,
    session: String,
}

impl std::fmt::Debug for HttpGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpGuard")
            .field("names", &self.names)
            .field("listen", &self.listen)
            .field("protect_reads", &self.readers.is_some())
            .finish()
    }
}

impl PartialEq for HttpGuard {
    fn eq(&self, other: &Self) -> bool {
        self.names == other.names && self.listen == other.listen && self.readers.is_none() == other.readers.is_none()
    }
}

impl Eq for HttpGuard {}

impl HttpGuard {
    /// A port listening on `listen`, reached also by the comma-separated `names` (e.g.
    /// `ringleader.example.com, lab.internal`; ports and surrounding spaces are ignored).
    pub fn new(listen: Option<SocketAddr>, names: &str) -> HttpGuard {
        let names =
            names.split(',').map(|n| host_name(n.trim()).to_ascii_lowercase()).filter(|n| !n.is_empty()).collect();
        HttpGuard { names, listen: listen.map(|a| a.ip()), readers: None }
    }

    /// Every request needs a token `check` allows (or the session cookie a browser got with one);
    /// the cookie is named after `port`, so ports of one host keep theirs apart.
    pub fn protect_reads(self, port: u16, check: TokenCheck) -> Result<HttpGuard, std::io::Error> {
        let mut random = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut random)?;
        let session = random.iter().map(|b| format!("{b:02x}")).collect();
        Ok(HttpGuard {
            readers: Some(Readers { check, cookie_name: format!("ringleader-read-{port}"), session }),
            ..self
        })
    }

    /// Whether reads need a token.
    pub fn reads_protected(&self) -> bool {
        self.readers.is_some()
    }

    /// Does the port answer to `host` (a Host header: a name or address, maybe with a port)?
    pub fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        if let Ok(ip) = name.parse::<IpAddr>() {
            // An address cannot be rebound: only a page loaded from it sends it.
            return ip.is_loopback()
                || Some(ip) == self.listen
                || self.listen.is_some_and(|l| l.is_unspecified())
                || ip.to_canonical().is_loopback();
        }
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        name == "localhost" || self.names.contains(&name)
    }

    /// The refusal of a request whose Host the port does not answer to.
    fn misdirected(&self, host: Option<&str>) -> Response {
        let mut known = vec!["localhost".to_string(), "loopback addresses".to_string()];
        match self.listen {
            Some(ip) if ip.is_unspecified() => known.push("any of its IP addresses".into()),
            Some(ip) if !ip.is_loopback() => known.push(ip.to_string()),
            _ => {}
        }
        known.extend(self.names.iter().cloned());
        let asked = match host {
            Some(h) => format!("as `{h}`"),
            None => "without a Host header".into(),
        };
        let body = format!(
            "421 Misdirected Request: this server is not reached {asked}. It answers to {}; add a name to \
             telemetry.http_hosts (RINGLEADER__TELEMETRY__HTTP_HOSTS, comma-separated) to reach it by that name. \
             (A guard against DNS rebinding: a page of another site whose name points here is refused.)\n",
            known.join(", ")
        );
        (StatusCode::MISDIRECTED_REQUEST, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
    }
}

/// The name in a Host header (or URI authority): without its port or an IPv6 address's brackets.
fn host_name(host: &str) -> &str {
    match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None if host.matches(':').count() > 1 => host, // a bare IPv6 address
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    }
}

/// The Host a request names: its `Host` header, else its URI's authority.
fn host_of(request: &Request) -> Option<String> {
    match request.headers().get(header::HOST) {
        Some(v) => v.to_str().ok().map(str::to_string),
        None => request.uri().authority().map(|a| a.as_str().to_string()),
    }
}

/// The bearer token of `headers`: `Ok(None)` without an `Authorization` header, `Err` when it is
/// not `Bearer <token>`.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ()> {
    let Some(value) = headers.get(header::AUTHORIZATION) else { return Ok(None) };
    let text = value.to_str().map_err(|_| ())?;
    match text.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => {
            Ok(Some(token.trim()))
        }
        _ => Err(()),
    }
}

/// The value of the cookie `name` among the request's cookies.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find_map(|(k, v)| (k == name).then_some(v))
}

/// What the credentials of a request come to.
enum Credentials {
    Allowed,
    Missing,
    Wrong(&'static str),
}

impl Readers {
    /// Either credential that allows reads lets the request through (a lab call sends the tab's
    /// session cookie and its bearer token, which the call's own authorization then checks).
    fn credentials(&self, headers: &HeaderMap) -> Credentials {
        let session =
            cookie(headers, &self.cookie_name).is_some_and(|v| bool::from(v.as_bytes().ct_eq(self.session.as_bytes())));
        match bearer(headers) {
            _ if session => Credentials::Allowed,
            Ok(Some(token)) if (self.check)(token) => Credentials::Allowed,
            Ok(Some(_)) => Credentials::Wrong("the bearer token does not allow reading this server"),
            Err(()) => Credentials::Wrong("the Authorization header must be `Bearer <token>`"),
            // No credentials, or the session of an earlier run of the process: sign in (again).
            Ok(None) => Credentials::Missing,
        }
    }

    /// `POST /session`: the cookie for a token that allows reads.
    fn session(&self, headers: &HeaderMap) -> Response {
        match bearer(headers) {
            Ok(Some(token)) if (self.check)(token) => {
                let cookie = format!("{}={}; Path=/; HttpOnly; SameSite=Strict", self.cookie_name, self.session);
                match HeaderValue::from_str(&cookie) {
                    Ok(v) => (StatusCode::NO_CONTENT, [(header::SET_COOKIE, v)]).into_response(),
                    Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                }
            }
            Ok(None) => refusal(StatusCode::UNAUTHORIZED, "present the token as `Authorization: Bearer <token>`"),
            _ => refusal(StatusCode::FORBIDDEN, "the token does not allow reading this server"),
        }
    }
}

/// A refused read, in plain text.
fn refusal(status: StatusCode, why: &str) -> Response {
    let body = format!(
        "{} {}: {why}. Reads of this server need auth.token or auth.read_token (auth.protect_reads): send \
         `Authorization: Bearer <token>`, or sign in from a browser (POST {SESSION_PATH} with the bearer token \
         sets a session cookie).\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    let mut response = (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"ringleader\""));
    response
}

/// The page a browser gets instead of a protected one: a field for the token, which its script
/// presents to `POST /session` before loading the page again.
fn sign_in(status: StatusCode) -> Response {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign in · ringleader</title>\
         <link rel=\"icon\" href=\"data:,\"></head><body><h1>This server asks for a token</h1>\
         <p>Reads need the controller's token or its read-only token (<code>auth.protect_reads</code>). \
         Enter it once: this tab keeps a session until the server restarts.</p>\
         <form id=\"sign-in-form\"><input name=\"username\" autocomplete=\"username\" value=\"ringleader\" hidden>\
         <label>Token <input id=\"token\" type=\"password\" autocomplete=\"current-password\" autofocus></label> \
         <button id=\"sign-in\" type=\"submit\">Sign in</button></form><p id=\"status\" role=\"status\"></p>\
         <script src=\"{SIGN_IN_SCRIPT_PATH}\"></script></body></html>"
    );
    let mut response = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"ringleader\""));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; connect-src 'self'; img-src data:; base-uri 'none'; \
             form-action 'none'; frame-ancestors 'none'",
        ),
    );
    response
}

/// The sign-in page's script.
const SIGN_IN_SCRIPT: &str = r#"(() => {
  const field = document.getElementById("token");
  const status = document.getElementById("status");
  // The form is never submitted (the policy allows no form action): its script signs in.
  async function signIn(event) {
    event.preventDefault();
    const token = field.value.trim();
    const response = await fetch("/session", { method: "POST", headers: { authorization: "Bearer " + token } });
    if (response.ok) {
      // The lab's calls that change state send the token from the tab too.
      sessionStorage.setItem("ringleader-token", token);
      location.reload();
    } else {
      status.textContent = await response.text();
    }
  }
  document.getElementById("sign-in-form").addEventListener("submit", signIn);
})();
"#;

/// The layer itself: the Host rule, then (with protected reads) the credentials.
pub async fn guard(State(guard): State<Arc<HttpGuard>>, request: Request, next: Next) -> Response {
    let host = host_of(&request);
    if !host.as_deref().is_some_and(|h| guard.host_allowed(h)) {
        return guard.misdirected(host.as_deref());
    }
    let Some(readers) = &guard.readers else { return next.run(request).await };
    let path = request.uri().path();
    if path == SESSION_PATH && request.method() == Method::POST {
        return readers.session(request.headers());
    }
    if path == SIGN_IN_SCRIPT_PATH && request.method() == Method::GET {
        return ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SIGN_IN_SCRIPT).into_response();
    }
    let browser = request.method() == Method::GET
        && request.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("text/html"));
    match readers.credentials(request.headers()) {
        Credentials::Allowed => next.run(request).await,
        Credentials::Missing if browser => sign_in(StatusCode::UNAUTHORIZED),
        Credentials::Missing => refusal(StatusCode::UNAUTHORIZED, "no credentials"),
        Credentials::Wrong(why) => refusal(StatusCode::FORBIDDEN, why),
    }
}

/// `app` behind `guard` (see the module docs).
pub fn layer(app: axum::Router, guard: HttpGuard) -> axum::Router {
    app.layer(axum::middleware::from_fn_with_state(Arc::new(guard), self::guard))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use tower::ServiceExt as _;

    /// The metrics port's routes (`/metrics`, then the fallback to the pages) behind `guard`.
    fn app(guard: HttpGuard) -> axum::Router {
        super::super::metrics_app(prometheus::Registry::new(), guard)
    }

    /// `method path` with `headers` through `app`: status, headers, body.
    async fn call(app: &axum::Router, method: &str, path: &str, headers: &[(&str, &str)]) -> (u16, HeaderMap, String) {
        let mut r = axum::http::Request::builder().method(method).uri(path);
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        let response = app.clone().oneshot(r.body(Body::empty()).unwrap()).await.unwrap();
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        (parts.status.as_u16(), parts.headers, String::from_utf8_lossy(&bytes).into_owned())
    }

    fn listen(addr: &str) -> Option<SocketAddr> {
        Some(addr.parse().unwrap())
    }

    /// The Host rule on every route (`/metrics` and the fallback the pages are served through):
    /// localhost, loopback addresses, the listen address (any address when it listens on all)
    /// and the configured names are answered; a rebound name, another address of a port bound to
    /// one, and a request without a Host are refused 421 with a text body naming the setting.
    /// Before, every Host was answered.
    #[tokio::test]
    async fn every_route_answers_only_the_names_it_is_reached_by() {
        let on_one = app(HttpGuard::new(listen("10.0.0.5:9464"), " Ringleader.Example.com:443 , lab.internal"));
        for host in ["127.0.0.1:9464", "localhost:9464", "LOCALHOST", "[::1]:9464", "10.0.0.5:9464", "lab.internal"] {
            assert_eq!(call(&on_one, "GET", "/metrics", &[("host", host)]).await.0, 200, "{host}");
        }
        assert_eq!(call(&on_one, "GET", "/metrics", &[("host", "ringleader.example.com.")]).await.0, 200);
        for host in ["rebound.example:9464", "10.0.0.6:9464", "127.0.0.1.nip.io", "localhost.evil.example"] {
            for path in ["/metrics", "/elections", "/", "/lab/start"] {
                let (status, headers, body) = call(&on_one, "GET", path, &[("host", host)]).await;
                assert_eq!(status, 421, "{host} {path}");
                assert!(headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/plain"));
                assert!(
                    body.contains(&format!("not reached as `{host}`")) && body.contains("telemetry.http_hosts"),
                    "{body}"
                );
            }
        }
        assert_eq!(call(&on_one, "POST", "/lab/start", &[("host", "rebound.example")]).await.0, 421);
        let (status, _, body) = call(&on_one, "GET", "/metrics", &[]).await;
        assert_eq!(status, 421, "no Host");
        assert!(body.contains("without a Host header"), "{body}");
        let on_all = app(HttpGuard::new(listen("0.0.0.0:9464"), ""));
        assert_eq!(call(&on_all, "GET", "/metrics", &[("host", "10.244.1.7:9464")]).await.0, 200, "a pod's IP");
        assert_eq!(call(&on_all, "GET", "/metrics", &[("host", "rebound.example")]).await.0, 421);
        let loopback = app(HttpGuard::new(listen("127.0.0.1:9464"), ""));
        assert_eq!(call(&loopback, "GET", "/metrics", &[("host", "10.244.1.7:9464")]).await.0, 421);
    }

    /// With protected reads every route needs credentials: none is 401 (a browser asking for a
    /// page gets the sign-in page, its script allowed by a policy of its own origin), a wrong
    /// token 403; a token the check allows reads, and so does the session cookie `POST /session`
    /// sets for it (HttpOnly, SameSite=Strict), but not a made-up one; the Host rule still comes
    /// first. Before, `/metrics` and the pages answered anyone.
    #[tokio::test]
    async fn protected_reads_take_a_token_or_its_session() {
        let check: TokenCheck = Arc::new(|t: &str| t == "read-token-1" || t == "full-token-1");
        let app = app(HttpGuard::new(listen("127.0.0.1:9464"), "").protect_reads(9464, check).unwrap());
        let host = ("host", "127.0.0.1:9464");
        for path in ["/metrics", "/elections", "/elections/e1/record.json", "/"] {
            let (status, headers, body) = call(&app, "GET", path, &[host]).await;
            assert_eq!(status, 401, "{path}");
            assert_eq!(headers[header::WWW_AUTHENTICATE], "Bearer realm=\"ringleader\"");
            assert!(body.contains("auth.read_token") && body.contains("Authorization: Bearer"), "{body}");
        }
        let (status, headers, page) = call(&app, "GET", "/elections", &[host, ("accept", "text/html,*/*")]).await;
        assert_eq!(status, 401);
        assert!(page.contains("<script src=\"/session.js\"></script>"), "{page}");
        assert!(headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap().contains("script-src 'self'"));
        let (status, _, script) = call(&app, "GET", "/session.js", &[host]).await;
        assert_eq!(status, 200);
        assert!(script.contains("fetch(\"/session\""));
        assert_eq!(call(&app, "GET", "/metrics", &[host, ("authorization", "Bearer read-token-1")]).await.0, 200);
        assert_eq!(call(&app, "GET", "/metrics", &[host, ("authorization", "Bearer full-token-1")]).await.0, 200);
        assert_eq!(call(&app, "GET", "/metrics", &[host, ("authorization", "Bearer wrong-token")]).await.0, 403);
        assert_eq!(call(&app, "GET", "/metrics", &[host, ("authorization", "Basic abc")]).await.0, 403);
        assert_eq!(call(&app, "POST", "/session", &[host]).await.0, 401);
        assert_eq!(call(&app, "POST", "/session", &[host, ("authorization", "Bearer wrong-token")]).await.0, 403);
        let (status, headers, _) =
            call(&app, "POST", "/session", &[host, ("authorization", "Bearer read-token-1")]).await;
        assert_eq!(status, 204);
        let set = headers[header::SET_COOKIE].to_str().unwrap().to_string();
        assert!(
            set.starts_with("ringleader-read-9464=") && set.contains("HttpOnly") && set.contains("SameSite=Strict")
        );
        let session = set.split(';').next().unwrap().to_string();
        assert!(!session.contains("read-token-1"), "the cookie is not the token");
        let with_cookie = format!("theme=dark; {session}");
        assert_eq!(call(&app, "GET", "/metrics", &[host, ("cookie", &with_cookie)]).await.0, 200);
        assert_eq!(call(&app, "GET", "/metrics", &[host, ("cookie", "ringleader-read-9464=00ff")]).await.0, 401);
        let rebound = [("host", "rebound.example:9464"), ("authorization", "Bearer full-token-1")];
        assert_eq!(call(&app, "GET", "/metrics", &rebound).await.0, 421, "the Host rule first");
    }
}
