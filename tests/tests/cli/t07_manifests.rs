//! The Kubernetes manifests stay consistent with the repository: the
//! dashboards ConfigMap embeds `dashboards/*.json` verbatim, `k8s/` holds only
//! what `kubectl apply -f k8s/` can apply (namespace first), and the config
//! file the pods mount is one the controller accepts.
//! (Schema and policy checks: `scripts/validate-k8s`, run by CI.)

use std::path::PathBuf;

use ringleader_controller::config::{Config, Flags};
use ringleader_tests::workspace_root;

/// The value of `key: |` in a ConfigMap manifest: the block's lines with their 4-space indent removed.
fn block(manifest: &str, key: &str) -> Option<String> {
    let mut lines = manifest.lines().skip_while(|l| l.trim_end() != format!("  {key}: |"));
    lines.next()?;
    let mut out = String::new();
    for line in lines {
        match line.strip_prefix("    ") {
            Some(rest) => out.push_str(rest),
            None if line.is_empty() => {}
            None => break,
        }
        out.push('\n');
    }
    // A block scalar with `|` keeps exactly one final newline.
    while out.ends_with("\n\n") {
        out.pop();
    }
    Some(out)
}

fn k8s_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(workspace_root().join("k8s")).expect("k8s/").map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

/// The manifest in `k8s/` that defines the ConfigMap `name`.
fn config_map(name: &str) -> String {
    k8s_files()
        .into_iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .find(|m| m.contains(&format!("name: {name}")))
        .unwrap_or_else(|| panic!("a ConfigMap named {name} in k8s/"))
}

/// Every dashboard JSON in `dashboards/` is embedded verbatim in the `ringleader-dashboards` ConfigMap of
/// `k8s/`, and the ConfigMap holds no other dashboard (regenerate it with `scripts/gen-dashboards-configmap`).
#[test]
fn dashboards_configmap_matches_the_json_files() {
    let manifest = config_map("ringleader-dashboards");
    let mut dashboards: Vec<PathBuf> = std::fs::read_dir(workspace_root().join("dashboards"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    dashboards.sort();
    assert!(dashboards.len() >= 2, "the overview and the election drill-down");
    for file in &dashboards {
        let name = file.file_name().unwrap().to_str().unwrap();
        let json = std::fs::read_to_string(file).unwrap();
        let embedded = block(&manifest, name).unwrap_or_else(|| panic!("{name} is not in the ConfigMap"));
        assert!(
            embedded == json,
            "{name} in the ConfigMap differs from dashboards/{name}; run scripts/gen-dashboards-configmap"
        );
    }
    let keys = manifest.lines().filter(|l| l.starts_with("  ") && l.trim_end().ends_with(".json: |")).count();
    assert_eq!(keys, dashboards.len(), "the ConfigMap embeds a dashboard that is not in dashboards/");
}

/// `kubectl apply -f k8s/` applies every .yaml/.yml/.json file there in name order: the namespace sorts
/// first, there is no kustomization.yaml, and nothing else but this folder's README.
#[test]
fn k8s_folder_is_applicable_as_it_is() {
    let names: Vec<String> = k8s_files()
        .iter()
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    let manifests: Vec<&String> = names.iter().filter(|n| n.ends_with(".yaml")).collect();
    assert_eq!(manifests.first().map(|s| s.as_str()), Some("00-namespace.yaml"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("kustomization")), "{names:?}");
    for n in &names {
        assert!(n.ends_with(".yaml") || n == "README.md", "kubectl apply -f k8s/ cannot apply {n}");
    }
    let namespace = std::fs::read_to_string(workspace_root().join("k8s/00-namespace.yaml")).unwrap();
    assert!(namespace.contains("kind: Namespace"), "{namespace}");
}

/// The ringleader.toml the pods mount (ConfigMap `ringleader-config`) is accepted by the controller's
/// loader and validation, discovers the nodes through the headless Service, and exports telemetry.
#[test]
fn mounted_config_is_valid_for_the_controller() {
    let manifest = config_map("ringleader-config");
    let toml = block(&manifest, "ringleader.toml").expect("ringleader.toml in the ConfigMap");
    let path = std::env::temp_dir().join(format!("ringleader-k8s-{}.toml", std::process::id()));
    std::fs::write(&path, toml).unwrap();
    let config = Config::load_from(&Flags { config: Some(path.clone()), ..Flags::default() }, Vec::new()).unwrap();
    std::fs::remove_file(&path).unwrap();
    config.validate().unwrap();
    assert!(config.controller.discover.starts_with("ringleader-node."), "{:?}", config.controller.discover);
    assert!(config.telemetry.otlp_endpoint.is_some() && config.telemetry.metrics_listen.is_some());
}
