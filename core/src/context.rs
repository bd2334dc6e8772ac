//! Building a node's [`NodeContext`]: the one way every driver (the
//! simulator, schedule replay, the checker, the test harness, the node
//! runtime) fills it, so that a field added to it is filled in one place.

use crate::protocol::{NodeContext, Options, PortInfo, Rule, coin};
use crate::topology::Topology;

impl<'a> NodeContext<'a> {
    /// Node `id` of an election of `n` nodes won by `rule`, drawing `coin`,
    /// whose ports lead where `port_info` says (one entry per port); no
    /// options.
    pub fn new(id: u64, rule: Rule, n: u32, coin: u64, port_info: &'a [PortInfo]) -> NodeContext<'a> {
        NodeContext { id, rule, n, coin, ports: port_info.len() as u32, port_info, options: Options::default() }
    }

    /// Position `p` of `topo` (`ids` by position) in an election won by
    /// `rule` and seeded with `seed`: its id, its ports (written into
    /// `ports`, a buffer a driver reuses position after position) and its
    /// coin ([`coin`]`(seed, p)`, the bits the simulator and the live runtime
    /// give it alike).
    pub fn at(
        topo: &Topology,
        ids: &[u64],
        p: u32,
        rule: Rule,
        seed: u64,
        ports: &'a mut Vec<PortInfo>,
    ) -> NodeContext<'a> {
        ports.clear();
        ports.extend(topo.ports(p).iter().map(|l| PortInfo { neighbour: ids[l.peer as usize], label: l.label }));
        NodeContext::new(ids[p as usize], rule, topo.len(), coin(seed, p), ports)
    }

    /// The same context with the election's `options` for this node.
    pub fn with_options(self, options: Options<'a>) -> NodeContext<'a> {
        NodeContext { options, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyKind;

    /// Position 1 of a bidirectional ring of four (ids 10, 20, 30, 40): id 20, n 4, two ports
    /// leading to its neighbours 10 and 30 in the topology's port order, the coin the simulator
    /// draws for it, no options until given some; the buffer is reused from a previous position.
    #[test]
    fn a_context_at_a_position_of_a_topology() {
        let topo = Topology::ring(TopologyKind::RingBi, 4, 0).unwrap();
        let ids = [10, 20, 30, 40];
        let mut ports = vec![PortInfo::default(); 7];
        let ctx = NodeContext::at(&topo, &ids, 1, Rule::Max, 9, &mut ports);
        let mut neighbours: Vec<u64> = ctx.port_info.iter().map(|i| i.neighbour).collect();
        neighbours.sort_unstable();
        assert_eq!((ctx.id, ctx.n, ctx.ports, ctx.coin, ctx.rule), (20, 4, 2, coin(9, 1), Rule::Max));
        assert_eq!(neighbours, [10, 30]);
        assert_eq!(ctx.options, Options::default());
        let options = [("a".to_string(), "1".to_string())];
        assert_eq!(ctx.with_options(Options(&options)).options.0, &options);
    }
}
