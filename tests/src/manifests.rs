//! What the k8s/ manifests configure, read the simple way the tests need
//! (no YAML parser: the manifests' layout is fixed by `scripts/validate-k8s`).

use crate::workspace_root;

/// A file of the workspace (e.g. `k8s/20-node.yaml`), whole.
pub fn read(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `RINGLEADER__*` variables of a manifest's container `env` (`- name:` then `value:`).
pub fn ringleader_env(manifest: &str) -> Vec<(String, String)> {
    let mut env = Vec::new();
    let mut lines = manifest.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if let Some(name) = line.strip_prefix("- name: ").filter(|n| n.starts_with("RINGLEADER__"))
            && let Some(value) = lines.next().and_then(|l| l.strip_prefix("value: "))
        {
            env.push((name.to_string(), value.trim_matches('"').to_string()));
        }
    }
    env
}

/// `key: value` under `stringData:` in a Secret manifest.
pub fn secret_value(manifest: &str, key: &str) -> String {
    let data = manifest.split("stringData:").nth(1).expect("stringData in the Secret");
    data.lines()
        .filter_map(|l| l.trim().strip_prefix(&format!("{key}: ")))
        .next()
        .unwrap_or_else(|| panic!("{key} in the Secret"))
        .to_string()
}

/// The `ringleader.toml` block of the ConfigMap (4-space indented lines after `ringleader.toml: |`).
pub fn config_toml(manifest: &str) -> String {
    let block = manifest.split("ringleader.toml: |").nth(1).expect("ringleader.toml in the ConfigMap");
    block
        .lines()
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with("    "))
        .map(|l| format!("{}\n", l.trim_start()))
        .collect()
}
