//! Election overlays: which position's port leads to which neighbour, and how
//! ids are placed on the positions.
//!
//! Convention (kept everywhere): ids are listed in ring order; position `i`'s
//! right neighbour is position `i + 1 mod n`; port [`RIGHT`] leads right and
//! [`LEFT`] leads left; a unidirectional ring only has links to the right, so
//! every node sends on `RIGHT` and receives on `LEFT`. On an unoriented ring
//! each node's labels are swapped or not at random (from the election seed):
//! links go both ways but "right" means nothing shared.

use std::collections::HashSet;

use rand::{SeedableRng, seq::SliceRandom};
use rand_pcg::Pcg64Mcg;

use crate::algo::{LEFT, Port, RIGHT};

/// Shapes of election overlay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TopologyKind {
    /// Ring with links to the right only.
    RingUni,
    /// Ring with links both ways and a common sense of direction.
    RingBi,
    /// Ring with links both ways, each node's port labels its own.
    RingBiUnoriented,
}

impl TopologyKind {
    /// Stable name used in docs and errors.
    pub fn name(self) -> &'static str {
        match self {
            TopologyKind::RingUni => "RING_UNIDIRECTIONAL",
            TopologyKind::RingBi => "RING_BIDIRECTIONAL",
            TopologyKind::RingBiUnoriented => "RING_BIDIRECTIONAL_UNORIENTED",
        }
    }

    /// Are links bidirectional?
    pub fn bidirectional(self) -> bool {
        !matches!(self, TopologyKind::RingUni)
    }

    /// Do all nodes share a sense of direction?
    pub fn oriented(self) -> bool {
        !matches!(self, TopologyKind::RingBiUnoriented)
    }
}

/// Where one port of a position leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortLink {
    /// Neighbour's position.
    pub peer: u32,
    /// The neighbour's port our messages arrive on.
    pub remote_port: Port,
    /// May this node send on the port? (false: receive only)
    pub outgoing: bool,
}

/// A built overlay of `n` positions.
#[derive(Clone, Debug)]
pub struct Topology {
    kind: TopologyKind,
    ports: Vec<[PortLink; 2]>,
}

/// Errors building an overlay.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// Rings need at least two positions.
    #[error("a ring needs at least 2 positions, got {0}")]
    TooSmall(u32),
}

impl Topology {
    /// A ring of `n` positions; `seed` draws the port labels of an unoriented ring.
    pub fn ring(kind: TopologyKind, n: u32, seed: u64) -> Result<Self, TopologyError> {
        if n < 2 {
            return Err(TopologyError::TooSmall(n));
        }
        let mut flipped = vec![false; n as usize];
        if kind == TopologyKind::RingBiUnoriented {
            let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x6f72_6965_6e74);
            for f in flipped.iter_mut() {
                *f = rand::Rng::random(&mut rng);
            }
            // Keep it genuinely unoriented: at least one node disagrees with another.
            if n >= 2 && flipped.iter().all(|&f| f == flipped[0]) {
                flipped[1] = !flipped[0];
            }
        }
        let outgoing_left = kind.bidirectional();
        // Local label of the physical direction at position i.
        let label = |i: usize, dir_right: bool| -> Port {
            let p = if dir_right { RIGHT } else { LEFT };
            if flipped[i] { 1 - p } else { p }
        };
        let n_us = n as usize;
        let mut ports = Vec::with_capacity(n_us);
        for (i, &flip) in flipped.iter().enumerate() {
            let r = (i + 1) % n_us;
            let l = (i + n_us - 1) % n_us;
            let right = PortLink { peer: r as u32, remote_port: label(r, false), outgoing: true };
            let left = PortLink { peer: l as u32, remote_port: label(l, true), outgoing: outgoing_left };
            ports.push(if flip { [right, left] } else { [left, right] });
        }
        Ok(Topology { kind, ports })
    }

    /// The overlay's shape.
    pub fn kind(&self) -> TopologyKind {
        self.kind
    }

    /// Number of positions.
    pub fn len(&self) -> u32 {
        self.ports.len() as u32
    }

    /// Always false: overlays have at least two positions.
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    /// The ports of `position`, indexed by local port number.
    pub fn ports(&self, position: u32) -> &[PortLink] {
        &self.ports[position as usize]
    }

    /// Where `port` of `position` leads, if the port exists.
    #[inline]
    pub fn link(&self, position: u32, port: Port) -> Option<&PortLink> {
        self.ports.get(position as usize)?.get(port as usize)
    }

    /// Largest number of ports at a position.
    pub fn max_degree(&self) -> u32 {
        2
    }
}

/// How ids are placed on the positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdOrder {
    /// 1, 2, ..., n in ring order.
    Ascending,
    /// n, n-1, ..., 1 in ring order.
    Descending,
    /// A permutation of 1..=n drawn from the seed.
    Random(u64),
    /// Given ids in ring order.
    Explicit(Vec<u64>),
    /// The algorithm's worst-case arrangement (see the catalogue's `worst_case`).
    WorstCase,
    /// The algorithm's best-case arrangement (see the catalogue's `best_case`).
    BestCase,
}

/// Bad id lists.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// An id appears twice.
    #[error("id {0} appears more than once")]
    Duplicate(u64),
    /// Worst and best cases depend on the algorithm: resolve them with the catalogue.
    #[error("the worst and best case arrangements depend on the algorithm")]
    NeedsAlgorithm,
    /// The explicit list's length differs from the requested size.
    #[error("{given} ids given for {n} positions")]
    WrongLength {
        /// Ids given.
        given: usize,
        /// Positions requested.
        n: u32,
    },
}

impl IdOrder {
    /// The ids of `n` positions in ring order.
    pub fn arrange(&self, n: u32) -> Result<Vec<u64>, IdError> {
        let n_u = n as u64;
        Ok(match self {
            IdOrder::Ascending => (1..=n_u).collect(),
            IdOrder::Descending => (1..=n_u).rev().collect(),
            IdOrder::Random(seed) => {
                let mut ids: Vec<u64> = (1..=n_u).collect();
                ids.shuffle(&mut Pcg64Mcg::seed_from_u64(*seed));
                ids
            }
            IdOrder::Explicit(ids) => {
                if ids.len() != n as usize {
                    return Err(IdError::WrongLength { given: ids.len(), n });
                }
                check_distinct(ids)?;
                ids.clone()
            }
            IdOrder::WorstCase | IdOrder::BestCase => return Err(IdError::NeedsAlgorithm),
        })
    }
}

/// Reject lists where an id appears twice.
pub fn check_distinct(ids: &[u64]) -> Result<(), IdError> {
    let mut seen = HashSet::with_capacity(ids.len());
    for &id in ids {
        if !seen.insert(id) {
            return Err(IdError::Duplicate(id));
        }
    }
    Ok(())
}

/// `k` distinct positions out of `n`, drawn from `seed`, sorted.
pub fn pick_initiators(n: u32, k: u32, seed: u64) -> Vec<u32> {
    let mut all: Vec<u32> = (0..n).collect();
    if k >= n {
        return all;
    }
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x696e_6974);
    all.partial_shuffle(&mut rng, k as usize);
    let mut chosen = all[..k as usize].to_vec();
    chosen.sort_unstable();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every port of every ring leads to a neighbour whose remote port leads straight back.
    #[test]
    fn ring_links_are_symmetric() {
        for kind in [TopologyKind::RingUni, TopologyKind::RingBi, TopologyKind::RingBiUnoriented] {
            for n in 2..9 {
                let t = Topology::ring(kind, n, 7).unwrap();
                for i in 0..n {
                    for (p, link) in t.ports(i).iter().enumerate() {
                        let back = t.link(link.peer, link.remote_port).unwrap();
                        assert_eq!(back.peer, i, "{kind:?} n={n} pos={i} port={p}");
                        assert_eq!(back.remote_port, p as Port);
                        if kind.bidirectional() {
                            assert!(link.outgoing);
                        }
                    }
                }
            }
        }
    }

    /// On oriented rings RIGHT leads to i+1 and arrives on the neighbour's LEFT.
    #[test]
    fn oriented_ring_convention() {
        let t = Topology::ring(TopologyKind::RingUni, 5, 0).unwrap();
        assert_eq!(t.link(4, RIGHT), Some(&PortLink { peer: 0, remote_port: LEFT, outgoing: true }));
        assert_eq!(t.link(0, LEFT), Some(&PortLink { peer: 4, remote_port: RIGHT, outgoing: false }));
    }

    /// Unoriented rings really disagree on direction somewhere.
    #[test]
    fn unoriented_ring_has_mixed_labels() {
        for seed in 0..20 {
            let t = Topology::ring(TopologyKind::RingBiUnoriented, 3, seed).unwrap();
            let rights: Vec<u32> = (0..3).map(|i| t.link(i, RIGHT).unwrap().peer).collect();
            assert_ne!(rights, vec![1, 2, 0], "seed {seed}");
        }
    }

    /// Id orders give permutations of 1..=n; explicit lists are checked.
    #[test]
    fn id_orders() {
        assert_eq!(IdOrder::Ascending.arrange(3).unwrap(), vec![1, 2, 3]);
        assert_eq!(IdOrder::Descending.arrange(3).unwrap(), vec![3, 2, 1]);
        let mut r = IdOrder::Random(9).arrange(50).unwrap();
        assert_eq!(r, IdOrder::Random(9).arrange(50).unwrap());
        r.sort();
        assert_eq!(r, (1..=50).collect::<Vec<_>>());
        assert_eq!(IdOrder::Explicit(vec![4, 4]).arrange(2), Err(IdError::Duplicate(4)));
        assert_eq!(IdOrder::Explicit(vec![4]).arrange(2), Err(IdError::WrongLength { given: 1, n: 2 }));
    }

    /// Initiator picks are distinct, sorted, in range, and reproducible.
    #[test]
    fn initiator_picks() {
        let a = pick_initiators(10, 4, 3);
        assert_eq!(a.len(), 4);
        assert!(a.windows(2).all(|w| w[0] < w[1]) && a.iter().all(|&p| p < 10));
        assert_eq!(a, pick_initiators(10, 4, 3));
        assert_eq!(pick_initiators(3, 0, 1).len(), 0);
        assert_eq!(pick_initiators(3, 5, 1), vec![0, 1, 2]);
    }
}
