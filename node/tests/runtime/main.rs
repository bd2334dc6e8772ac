//! End-to-end tests of the gRPC node runtime: real node servers on loopback
//! in one tokio runtime, driven through the Agent and Peer services; and of
//! the HTTP port serving `/metrics`.

mod fixtures;

mod t01_elections;
mod t02_agent_validation;
mod t03_link_rejections;
mod t04_lifecycle;
mod t05_complete_network;
mod t06_auth;
mod t07_limits;
mod t08_http;
mod t09_orphans;
