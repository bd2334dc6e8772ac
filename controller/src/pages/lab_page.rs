//! The lab's page: the start form, the check form and the explorer by hand
//! (its HTML here, its script in `lab.js`); the calls they make are
//! [`super::lab`]'s.

use std::fmt::Write as _;

use axum::extract::State;
use axum::response::Html;
use ringleader_core::algo::catalogue::{AlgorithmSpec, CATALOGUE};

use super::lab::Lab;
use super::{HEAD, escape};

/// `GET /`: the lab's form.
pub(super) async fn page(State(lab): State<Lab>) -> Html<String> {
    Html(render(lab.token_required, lab.service.programs().all()))
}

/// The lab page; `token_required` shows the token field; `programs` are the programs the
/// controller installed, listed after the catalogue (the lab starts them as `program`).
pub(super) fn render(token_required: bool, programs: &[&AlgorithmSpec]) -> String {
    let mut options = String::new();
    for kept in [false, true] {
        let _ =
            write!(options, "<optgroup label=\"{}\">", if kept { "keep a leader (or one-shot)" } else { "one-shot" });
        for spec in CATALOGUE.iter().filter(|s| s.kept.is_some() == kept) {
            let _ = write!(
                options,
                "<option value=\"{name}\" data-kept=\"{kept}\"{selected}>{title} — {name}</option>",
                name = escape(spec.name),
                title = escape(spec.title),
                selected = if spec.name == CATALOGUE[0].name { " selected" } else { "" },
            );
        }
        options.push_str("</optgroup>");
    }
    if !programs.is_empty() {
        options.push_str("<optgroup label=\"programs the operator installed (one-shot)\">");
        for spec in programs {
            let _ = write!(
                options,
                "<option value=\"{name}\" data-kept=\"false\" data-program=\"true\">{title} — {name} (program)</option>",
                name = escape(spec.name),
                title = escape(spec.title),
            );
        }
        options.push_str("</optgroup>");
    }
    format!(
        "{HEAD}<title>Lab · ringleader</title></head><body data-token-required=\"{token_required}\">\
         <nav><a href=\"/elections\">All elections</a></nav><h1>Leader election lab</h1>\
         <p>Choose an algorithm and its nodes, run it, then step through what happened.</p>\
         <section id=\"cluster\" class=\"cluster\" aria-live=\"polite\"><h2>The cluster</h2>\
         <p id=\"cluster-nodes\">reading the cluster…</p><ul id=\"cluster-faults\"></ul>\
         <p><button type=\"button\" id=\"cluster-clear\" hidden>Clear every fault the lab set</button> \
         <span id=\"cluster-status\"></span></p></section>\
         <h2>Run an election</h2>\
         <form id=\"start\" class=\"lab\">\
         <label>Algorithm <select name=\"algorithm\">{options}</select></label><span class=\"error\" data-for=\"algorithm\"></span>\
         <label>Nodes n <input name=\"size\" type=\"number\" min=\"1\" value=\"8\"></label><span class=\"error\" data-for=\"size\"></span>\
         <label>Ids <input name=\"ids\" placeholder=\"e.g. 5 1 8 3 (empty: arranged)\"></label><span class=\"error\" data-for=\"ids\"></span>\
         <label>Arrangement <select name=\"arrangement\"><option value=\"random\">random</option><option value=\"ascending\">sorted, ascending</option>\
         <option value=\"descending\">sorted, descending</option><option value=\"worst\">worst case</option><option value=\"best\">best case</option></select></label>\
         <span class=\"error\" data-for=\"id_order\"></span>\
         <fieldset><legend>Initiators</legend><div id=\"initiators\">every node (type ids to choose)</div></fieldset>\
         <div class=\"errors\"><span class=\"error\" data-for=\"initiator_ids\"></span><span class=\"error\" data-for=\"initiators\"></span></div>\
         <fieldset><legend>Run</legend><label><input type=\"radio\" name=\"mode\" value=\"live\" checked> LIVE on the nodes</label>\
         <label><input type=\"radio\" name=\"mode\" value=\"simulated\"> SIMULATED</label>\
         <label><input type=\"checkbox\" name=\"unit_delay\"> unit delays (simulated; else random)</label>\
         <label>Seed <input name=\"seed\" type=\"number\" min=\"0\" value=\"1\"></label></fieldset>\
         <div class=\"errors\"><span class=\"error\" data-for=\"seed\"></span><span class=\"error\" data-for=\"mode\"></span>\
         <span class=\"error\" data-for=\"simulation\"></span></div>\
         <fieldset><legend>Diagram</legend><label>axis <select name=\"axis\"><option value=\"compressed\">time, idle stretches compressed</option>\
         <option value=\"time\">time to scale</option><option value=\"causal\">causal (Lamport's clock)</option></select></label>\
         <label><input type=\"checkbox\" name=\"labels\"> label each arrow with what it carries</label>\
         <label><input type=\"checkbox\" name=\"heartbeats\"> draw the heartbeats (SIMULATED kept)</label></fieldset>\
         <span class=\"error\" data-for=\"diagram_options\"></span>\
         <fieldset id=\"kept\"><legend>Keep a leader</legend><label><input type=\"checkbox\" name=\"keep_leader\"> keep a leader until stopped</label>\
         <label>detector period <input name=\"detector_period_ms\" type=\"number\" min=\"0\" placeholder=\"50\"> ms</label>\
         <label>timeout <input name=\"detector_timeout_ms\" type=\"number\" min=\"0\" placeholder=\"200\"> ms</label>\
         <div class=\"fault-row\"><span>SIMULATED:</span>\
         <label>runs for <input name=\"horizon_ms\" type=\"number\" min=\"0\" placeholder=\"3000\"> virtual ms,</label>\
         <label>with <select name=\"fault\"><option value=\"\">no fault</option><option value=\"crash_leader\">the leader crashing</option>\
         <option value=\"crash\">a node crashing</option><option value=\"cut_off_leader\">the leader cut off</option>\
         <option value=\"slow_cut_off_leader\">the leader cut off, its clock at half speed</option></select></label>\
         <label>at <input name=\"fault_at_ms\" type=\"number\" min=\"0\" value=\"500\"> ms</label>\
         <label>(node id <input name=\"fault_id\" type=\"number\" min=\"0\" placeholder=\"for a node\">),</label>\
         <label>undone (recovered, healed) at <input name=\"undo_at_ms\" type=\"number\" min=\"0\" placeholder=\"never\"> ms</label></div></fieldset>\
         <div class=\"errors\"><span class=\"error\" data-for=\"keep_leader\"></span><span class=\"error\" data-for=\"detector\"></span>\
         <span class=\"error\" data-for=\"simulation.horizon_ms\"></span><span class=\"error\" data-for=\"simulation.faults\"></span></div>\
         <label>Options <input name=\"options\" size=\"40\" placeholder=\"e.g. pre_vote=true lease=true (raft)\"></label>\
         <span class=\"error\" data-for=\"options\"></span>\
         <label id=\"token-row\">Controller token <input name=\"token\" type=\"password\" autocomplete=\"off\"></label>\
         <span class=\"error\" data-for=\"token\"></span>\
         <p class=\"submit\"><button type=\"submit\" id=\"run\">Run</button> <span id=\"status\" class=\"status\" data-for=\"\"></span></p>\
         </form>\
         <h2>Check every schedule</h2><p>The checker tries every order in which a small election's messages may \
         arrive (and, for a kept leadership, the faults asked for), up to its budget of states, and shows the shortest schedule that \
         breaks a property; for one too large to finish, a random walk samples schedules from a seed instead (a sample, \
         not a proof). Checks take turns: while yours waits, the status beside Check gives its place in the queue; \
         a check asked before is answered at once.</p>\
         <form id=\"check\" class=\"lab\">\
         <label>Algorithm <select name=\"algorithm\">{options}</select></label><span class=\"error\" data-for=\"algorithm\"></span>\
         <label>Nodes n <input name=\"n\" type=\"number\" min=\"0\" value=\"3\"></label><span class=\"error\" data-for=\"n\"></span>\
         <label>Ids <input name=\"ids\" placeholder=\"4,4,4,4\" title=\"in ring order; empty: 1..n; the same id on every node: an anonymous ring\"></label>\
         <span class=\"error\" data-for=\"ids\"></span><span class=\"error\" data-for=\"anonymous\"></span>\
         <fieldset><legend>Schedules</legend><label><input type=\"checkbox\" name=\"any_order\"> links may reorder messages</label>\
         <label><input type=\"checkbox\" name=\"kept\"> the kept leadership</label>\
         <label>crashes <input name=\"crashes\" type=\"number\" min=\"0\" value=\"0\"></label>\
         <label>losses <input name=\"losses\" type=\"number\" min=\"0\" value=\"0\"></label>\
         <label>partitions <input name=\"partitions\" type=\"number\" min=\"0\" value=\"0\"></label>\
         <label>stop after <input name=\"timeout_s\" type=\"number\" min=\"1\" max=\"600\" value=\"60\"> s of running</label></fieldset>\
         <fieldset><legend>Search</legend><label><input type=\"radio\" name=\"search\" value=\"every\" checked> every schedule</label>\
         <label title=\"for a check too large to finish: seeded random schedules, each checked at every step; a sample, not a proof\">\
         <input type=\"radio\" name=\"search\" value=\"walk\"> random walk</label>\
         <label>walks <input name=\"walks\" type=\"number\" min=\"1\" max=\"1000000\" value=\"1000\"></label>\
         <label>depth <input name=\"walk_depth\" type=\"number\" min=\"1\" max=\"100000\" value=\"1000\"></label>\
         <label>seed <input name=\"walk_seed\" value=\"0\" size=\"20\" inputmode=\"numeric\"></label></fieldset>\
         <div class=\"errors\"><span class=\"error\" data-for=\"timeout_s\"></span>\
         <span class=\"error\" data-for=\"kept\"></span><span class=\"error\" data-for=\"crashes\"></span>\
         <span class=\"error\" data-for=\"any_order\"></span><span class=\"error\" data-for=\"losses\"></span>\
         <span class=\"error\" data-for=\"partitions\"></span><span class=\"error\" data-for=\"walks\"></span>\
         <span class=\"error\" data-for=\"walk_depth\"></span><span class=\"error\" data-for=\"walk_seed\"></span></div>\
         <p class=\"submit\"><button type=\"submit\" id=\"check-run\">Check</button> <span id=\"check-status\" class=\"status\" data-for=\"\"></span></p>\
         </form><div id=\"check-result\" hidden><p id=\"check-verdict\"></p>\
         <div id=\"check-symmetric\" hidden><p>Every node starts in the same state: the symmetric execution, \
         in lock-step rounds (its steps below, one node after another within a round).</p><ol id=\"check-rounds\"></ol></div>\
         <div class=\"controls\" id=\"check-controls\"><button id=\"check-back\">◀ back</button><button id=\"check-forward\">forward ▶</button>\
         <button id=\"check-end\">to the violation ▶|</button><input type=\"range\" id=\"check-slider\" min=\"0\" value=\"0\">\
         <span id=\"check-where\"></span><button type=\"button\" id=\"check-explore\" hidden>open this counterexample \
         in the explorer</button></div><div class=\"check-body\"><ol id=\"check-steps\"></ol>\
         <div id=\"check-diagram\"></div></div></div>\
         <h3>Explore by hand</h3><p>For n up to 4: the check form's election from its first state, each next step \
         chosen by you among every step the network and the faults allow, every node's state shown at each step \
         and a broken property in red.</p>\
         <p><button type=\"button\" id=\"explore-run\">Explore</button> <span id=\"explore-status\" class=\"error\"></span></p>\
         <div id=\"explore\" hidden><p id=\"explore-where\"></p>\
         <div class=\"controls\"><button type=\"button\" id=\"explore-back\">◀ back</button>\
         <button type=\"button\" id=\"explore-restart\">start again</button> \
         <a id=\"explore-link\" href=\"#\">a link to this path</a></div>\
         <p id=\"explore-error\" class=\"error\"></p>\
         <div class=\"stage\"><div><h4>Next steps</h4><ol id=\"explore-choices\"></ol></div>\
         <div><h4>Nodes</h4><table id=\"explore-nodes\"><thead><tr><th>id</th><th>position</th><th>state</th>\
         <th>believes or decided</th><th>variables</th></tr></thead><tbody></tbody></table>\
         <h4>Messages in flight</h4><ul id=\"explore-flight\"></ul>\
         <h4>Properties</h4><ul id=\"explore-properties\"></ul></div></div>\
         <h4>Steps so far</h4><ol id=\"explore-steps\"></ol></div>\
         <script>{LAB_SCRIPT}</script></body></html>"
    )
}

/// The lab page's script: the initiator boxes, the kept settings, the
/// token kept in the tab, the call and its refusal shown by its field; the
/// check stepped through its counterexample, and the explorer by hand.
pub(super) const LAB_SCRIPT: &str = include_str!("lab.js");

#[cfg(test)]
mod tests {
    use super::*;

    /// The page lists every algorithm of the catalogue by its title with its catalogue name, kept
    /// ones marked, and shows the token field only when the controller asks for one; installed
    /// programs follow in a group of their own, marked as programs, and only when there are some.
    #[test]
    fn the_page_lists_the_catalogue() {
        let program = AlgorithmSpec { name: "my-ring", title: "My ring", ..CATALOGUE[0] };
        let with = render(false, &[&program]);
        assert!(
            with.contains("value=\"my-ring\" data-kept=\"false\" data-program=\"true\">My ring — my-ring (program)")
        );
        let page = render(false, &[]);
        assert!(!page.contains("data-program"));
        for spec in CATALOGUE {
            assert!(page.contains(&format!("{} — {}</option>", escape(spec.title), spec.name)), "{}", spec.name);
        }
        assert!(page.contains("value=\"bully\" data-kept=\"true\""));
        assert!(
            page.contains("data-token-required=\"false\"")
                && render(true, &[]).contains("data-token-required=\"true\"")
        );
    }
}
