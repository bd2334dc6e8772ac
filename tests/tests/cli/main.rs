//! End-to-end tests of the real `ringleader-controller` binary, driven the way
//! users drive it: flags and environment, `grpcurl`, SIGTERM.

mod browser;
mod t01_grpcurl;
mod t02_cargo_run;
mod t03_sigkill;
mod t04_netns;
mod t05_otlp;
mod t06_prometheus;
mod t07_manifests;
mod t08_k8s_env;
mod t09_sweep;
mod t10_page;
mod t11_containers;
mod t12_memory_budget;
mod t13_check_memory;
mod t14_silent_nodes;
mod t15_api_doc;
mod t16_lab;
mod t17_pictures;
mod t18_lease_etcd;
mod t19_http_guard;
mod t20_projector;
mod t21_stepper;
