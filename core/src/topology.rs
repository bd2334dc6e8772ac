//! Election overlays: which position's port leads to which neighbour, and how
//! ids are placed on the positions.
//!
//! Rings give every position two ports; a tree gives a position one port per
//! neighbour (in the order the edges list them), so algorithms on general
//! topologies learn their degree from the number of ports.
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

use crate::protocol::{Compass, LEFT, Port, RIGHT};

/// Shapes of election overlay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TopologyKind {
    /// Ring with links to the right only.
    RingUni,
    /// Ring with links both ways and a common sense of direction.
    RingBi,
    /// Ring with links both ways, each node's port labels its own.
    RingBiUnoriented,
    /// A tree: n − 1 bidirectional links, connected, acyclic.
    Tree,
    /// A rows × cols grid whose ports carry compass labels.
    Mesh,
    /// Every position linked to every other.
    Complete,
    /// Any connected graph.
    Graph,
    /// A rows × cols grid whose rows and columns wrap around (both at
    /// least 3); every position has four ports, labelled north, east,
    /// south and west, in that order.
    Torus,
    /// The d-dimensional hypercube on n = 2^d positions; port i leads
    /// across dimension i (the position whose number differs in bit i).
    Hypercube,
    /// The complete graph with chordal labels: port p of position v leads
    /// to position v + p + 1 mod n, the chord of length p + 1.
    CompleteChordal,
}

impl TopologyKind {
    /// Stable name used in docs and errors.
    pub fn name(self) -> &'static str {
        match self {
            TopologyKind::RingUni => "RING_UNIDIRECTIONAL",
            TopologyKind::RingBi => "RING_BIDIRECTIONAL",
            TopologyKind::RingBiUnoriented => "RING_BIDIRECTIONAL_UNORIENTED",
            TopologyKind::Tree => "TREE",
            TopologyKind::Mesh => "MESH",
            TopologyKind::Complete => "COMPLETE",
            TopologyKind::Graph => "GRAPH",
            TopologyKind::Torus => "TORUS",
            TopologyKind::Hypercube => "HYPERCUBE",
            TopologyKind::CompleteChordal => "COMPLETE_CHORDAL",
        }
    }

    /// Are links bidirectional?
    pub fn bidirectional(self) -> bool {
        !matches!(self, TopologyKind::RingUni)
    }

    /// Do all nodes share a sense of direction? (Only meaningful for rings.)
    pub fn oriented(self) -> bool {
        matches!(self, TopologyKind::RingUni | TopologyKind::RingBi)
    }

    /// Is it one of the rings?
    pub fn is_ring(self) -> bool {
        matches!(self, TopologyKind::RingUni | TopologyKind::RingBi | TopologyKind::RingBiUnoriented)
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
    /// Compass direction of the port on a mesh, [`Compass::None`] elsewhere.
    pub label: Compass,
}

/// A built overlay of `n` positions.
#[derive(Clone, Debug)]
pub struct Topology {
    kind: TopologyKind,
    /// Position i's ports are `links[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<u32>,
    links: Vec<PortLink>,
}

/// Errors building an overlay.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// Rings need at least two positions.
    #[error("an overlay needs at least 2 positions, got {0}")]
    TooSmall(u32),
    /// The edges do not form a tree on the positions.
    #[error("not a tree: {0}")]
    NotATree(EdgeError),
    /// The kind needs another constructor (e.g. a ring built as a tree).
    #[error("{0} is not built this way")]
    WrongKind(&'static str),
    /// The edges do not form a simple connected graph on the positions.
    #[error("not a connected graph: {0}")]
    NotAGraph(EdgeError),
    /// The mesh shape is impossible.
    #[error("not a mesh: {0}")]
    NotAMesh(String),
    /// The torus shape is impossible.
    #[error("not a torus: {0}")]
    NotATorus(String),
    /// A hypercube needs a power of two positions.
    #[error("not a hypercube: {0} positions; a hypercube has 2^d (2, 4, 8, 16, ...)")]
    NotAHypercube(u32),
}

/// What is wrong with the edges of a tree or graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EdgeError {
    /// A tree of `n` positions needs `n - 1` edges.
    #[error("{edges} edges for {n} positions; a tree has n - 1")]
    Count {
        /// Edges given.
        edges: usize,
        /// Positions.
        n: u32,
    },
    /// An end of edge `a`-`b` is not a position.
    #[error("edge {a}-{b} names a position outside 0..{n}")]
    Outside {
        /// One end.
        a: u32,
        /// The other end.
        b: u32,
        /// Positions.
        n: u32,
    },
    /// Edge `a`-`a`.
    #[error("edge {0}-{0} is a self-loop")]
    SelfLoop(u32),
    /// Edge `a`-`b` (either way round) is listed twice.
    #[error("edge {a}-{b} is listed twice")]
    Twice {
        /// One end.
        a: u32,
        /// The other end.
        b: u32,
    },
    /// This position is not connected to position 0.
    #[error("position {0} is not connected to position 0")]
    Disconnected(u32),
}

impl Topology {
    /// A ring of `n` positions; `seed` draws the port labels of an unoriented ring.
    pub fn ring(kind: TopologyKind, n: u32, seed: u64) -> Result<Self, TopologyError> {
        if !kind.is_ring() {
            return Err(TopologyError::WrongKind(kind.name()));
        }
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
        let mut links = Vec::with_capacity(2 * n_us);
        for (i, &flip) in flipped.iter().enumerate() {
            let r = (i + 1) % n_us;
            let l = (i + n_us - 1) % n_us;
            let right = PortLink { peer: r as u32, remote_port: label(r, false), outgoing: true, label: Compass::None };
            let left =
                PortLink { peer: l as u32, remote_port: label(l, true), outgoing: outgoing_left, label: Compass::None };
            links.extend(if flip { [right, left] } else { [left, right] });
        }
        Ok(Topology { kind, offsets: (0..=n).map(|i| 2 * i).collect(), links })
    }

    /// A tree on `n` positions from its edges (each listed once, either way
    /// round). A position's ports follow the order its edges are listed in.
    pub fn tree(n: u32, edges: &[(u32, u32)]) -> Result<Self, TopologyError> {
        if n < 2 {
            return Err(TopologyError::TooSmall(n));
        }
        if edges.len() != n as usize - 1 {
            return Err(TopologyError::NotATree(EdgeError::Count { edges: edges.len(), n }));
        }
        // n - 1 distinct edges and connected => a tree.
        let adj = adjacency(n, edges).map_err(TopologyError::NotATree)?;
        Ok(Self::from_adjacency(TopologyKind::Tree, &adj, |_, _| Compass::None))
    }

    /// A connected simple graph on `n` positions from its edges (each listed
    /// once, either way round). Ports follow the order edges are listed in.
    pub fn graph(n: u32, edges: &[(u32, u32)]) -> Result<Self, TopologyError> {
        if n < 2 {
            return Err(TopologyError::TooSmall(n));
        }
        let adj = adjacency(n, edges).map_err(TopologyError::NotAGraph)?;
        Ok(Self::from_adjacency(TopologyKind::Graph, &adj, |_, _| Compass::None))
    }

    /// A random connected graph on `n` positions: a uniformly random tree
    /// plus `n / 2` extra distinct edges, all drawn from `seed`.
    pub fn random_graph(n: u32, seed: u64) -> Result<Self, TopologyError> {
        Self::graph(n, &random_graph_edges(n, seed))
    }

    /// The complete graph on `n` positions. Port `p` of position `v` leads to
    /// the `p`-th other position in increasing order.
    pub fn complete(n: u32) -> Result<Self, TopologyError> {
        if n < 2 {
            return Err(TopologyError::TooSmall(n));
        }
        // Port p of v leads to w = p + (p >= v); w's port back to v is v − (v > w).
        let links = (0..n)
            .flat_map(|v| {
                (0..n).filter(move |&w| w != v).map(move |w| PortLink {
                    peer: w,
                    remote_port: if v > w { v - 1 } else { v },
                    outgoing: true,
                    label: Compass::None,
                })
            })
            .collect();
        Ok(Topology { kind: TopologyKind::Complete, offsets: (0..=n).map(|v| v * (n - 1)).collect(), links })
    }

    /// A `rows` × `cols` grid; position `r * cols + c` is row `r`, column
    /// `c`. Each position's ports are its existing neighbours in the order
    /// north, east, south, west, labelled with their [`Compass`] direction.
    pub fn mesh(rows: u32, cols: u32) -> Result<Self, TopologyError> {
        let n = mesh_size(rows, cols)?;
        let at = |v: u32| (v / cols, v % cols);
        let adj: Vec<Vec<u32>> = (0..n)
            .map(|v| {
                let (r, c) = at(v);
                let mut a = Vec::with_capacity(4);
                if r > 0 {
                    a.push(v - cols);
                }
                if c + 1 < cols {
                    a.push(v + 1);
                }
                if r + 1 < rows {
                    a.push(v + cols);
                }
                if c > 0 {
                    a.push(v - 1);
                }
                a
            })
            .collect();
        Ok(Self::from_adjacency(TopologyKind::Mesh, &adj, |v, w| {
            let ((r, c), (r2, c2)) = (at(v), at(w));
            match (r2.cmp(&r), c2.cmp(&c)) {
                (std::cmp::Ordering::Less, _) => Compass::North,
                (std::cmp::Ordering::Greater, _) => Compass::South,
                (_, std::cmp::Ordering::Greater) => Compass::East,
                _ => Compass::West,
            }
        }))
    }

    /// The most square mesh of `n` positions: rows = the largest divisor of
    /// `n` not above √n. Refused when that is 1 (n prime: only a line).
    pub fn square_mesh(n: u32) -> Result<Self, TopologyError> {
        let (rows, cols) = mesh_shape(n)?;
        Self::mesh(rows, cols)
    }

    /// A `rows` × `cols` torus: the mesh of [`Self::mesh`] with rows and
    /// columns wrapping around, so every position has four ports, always in
    /// the order north, east, south, west and labelled so. Both sides must
    /// be at least 3 (with 2 the north and south neighbours would coincide).
    pub fn torus(rows: u32, cols: u32) -> Result<Self, TopologyError> {
        let n = torus_size(rows, cols)?;
        let links = (0..n)
            .flat_map(|v| {
                let (r, c) = (v / cols, v % cols);
                let at = |r: u32, c: u32| r * cols + c;
                // Each port arrives on the opposite direction's port: N(0) <-> S(2), E(1) <-> W(3).
                [
                    (at((r + rows - 1) % rows, c), 2, Compass::North),
                    (at(r, (c + 1) % cols), 3, Compass::East),
                    (at((r + 1) % rows, c), 0, Compass::South),
                    (at(r, (c + cols - 1) % cols), 1, Compass::West),
                ]
                .map(|(peer, remote_port, label)| PortLink {
                    peer,
                    remote_port,
                    outgoing: true,
                    label,
                })
            })
            .collect();
        Ok(Topology { kind: TopologyKind::Torus, offsets: (0..=n).map(|v| 4 * v).collect(), links })
    }

    /// The most square torus of `n` positions: rows = the largest divisor
    /// of `n` not above √n. Refused when that is below 3.
    pub fn square_torus(n: u32) -> Result<Self, TopologyError> {
        let (rows, cols) = torus_shape(n)?;
        Self::torus(rows, cols)
    }

    /// The hypercube on `n` = 2^d positions (d ≥ 1): port i of position v
    /// leads to v with bit i flipped and arrives on that position's port i.
    pub fn hypercube(n: u32) -> Result<Self, TopologyError> {
        if n < 2 {
            return Err(TopologyError::TooSmall(n));
        }
        if !n.is_power_of_two() {
            return Err(TopologyError::NotAHypercube(n));
        }
        let d = n.trailing_zeros();
        let links = (0..n)
            .flat_map(|v| {
                (0..d).map(move |i| PortLink {
                    peer: v ^ (1 << i),
                    remote_port: i,
                    outgoing: true,
                    label: Compass::None,
                })
            })
            .collect();
        Ok(Topology { kind: TopologyKind::Hypercube, offsets: (0..=n).map(|v| v * d).collect(), links })
    }

    /// The complete graph on `n` positions with chordal labels: port p of
    /// position v leads to v + p + 1 mod n (the chord of length p + 1) and
    /// arrives on that position's chord n − p − 1 (port n − p − 2).
    pub fn complete_chordal(n: u32) -> Result<Self, TopologyError> {
        if n < 2 {
            return Err(TopologyError::TooSmall(n));
        }
        let links = (0..n)
            .flat_map(|v| {
                (0..n - 1).map(move |p| PortLink {
                    peer: (v + p + 1) % n,
                    remote_port: n - p - 2,
                    outgoing: true,
                    label: Compass::None,
                })
            })
            .collect();
        Ok(Topology { kind: TopologyKind::CompleteChordal, offsets: (0..=n).map(|v| v * (n - 1)).collect(), links })
    }

    /// Build from symmetric adjacency lists (`adj[v]` lists `v`'s neighbours
    /// in port order), labelling each port with `label(v, neighbour)`.
    fn from_adjacency(kind: TopologyKind, adj: &[Vec<u32>], label: impl Fn(u32, u32) -> Compass) -> Self {
        // w's port towards v: a scan for small degrees, a binary search in a
        // sorted copy for large ones (a star would otherwise cost n²).
        let sorted: Vec<Option<Vec<(u32, Port)>>> = adj
            .iter()
            .map(|a| {
                (a.len() > 16).then(|| {
                    let mut s: Vec<(u32, Port)> = a.iter().enumerate().map(|(q, &x)| (x, q as Port)).collect();
                    s.sort_unstable();
                    s
                })
            })
            .collect();
        let port_towards = |w: usize, v: u32| -> Port {
            match &sorted[w] {
                Some(s) => s.binary_search_by_key(&v, |&(x, _)| x).map_or(0, |i| s[i].1),
                None => adj[w].iter().position(|&x| x == v).unwrap_or(0) as Port,
            }
        };
        let mut offsets = Vec::with_capacity(adj.len() + 1);
        let mut links = Vec::with_capacity(adj.iter().map(Vec::len).sum());
        offsets.push(0);
        for (v, nbrs) in adj.iter().enumerate() {
            for &w in nbrs {
                let remote_port = port_towards(w as usize, v as u32);
                links.push(PortLink { peer: w, remote_port, outgoing: true, label: label(v as u32, w) });
            }
            offsets.push(links.len() as u32);
        }
        Topology { kind, offsets, links }
    }

    /// A uniformly random labelled tree on `n` positions (Prüfer sequence from `seed`).
    pub fn random_tree(n: u32, seed: u64) -> Result<Self, TopologyError> {
        Self::tree(n, &random_tree_edges(n, seed))
    }

    /// The overlay of `kind` on `n` positions, random parts drawn from `seed`
    /// (orientation of unoriented rings, the shape of a tree).
    /// Meshes and tori take the most square shape of `n` positions
    /// ([`Self::square_mesh`], [`Self::square_torus`]); a hypercube needs
    /// `n` a power of two.
    pub fn build(kind: TopologyKind, n: u32, seed: u64) -> Result<Self, TopologyError> {
        match kind {
            TopologyKind::Tree => Self::random_tree(n, seed),
            TopologyKind::Graph => Self::random_graph(n, seed),
            TopologyKind::Complete => Self::complete(n),
            TopologyKind::Mesh => Self::square_mesh(n),
            TopologyKind::Torus => Self::square_torus(n),
            TopologyKind::Hypercube => Self::hypercube(n),
            TopologyKind::CompleteChordal => Self::complete_chordal(n),
            TopologyKind::RingUni | TopologyKind::RingBi | TopologyKind::RingBiUnoriented => Self::ring(kind, n, seed),
        }
    }

    /// Every edge once, as (smaller position, larger position).
    pub fn edges(&self) -> Vec<(u32, u32)> {
        let mut e = Vec::new();
        for v in 0..self.len() {
            for l in self.ports(v) {
                if v < l.peer {
                    e.push((v, l.peer));
                }
            }
        }
        e
    }

    /// The overlay's shape.
    pub fn kind(&self) -> TopologyKind {
        self.kind
    }

    /// Number of positions.
    pub fn len(&self) -> u32 {
        self.offsets.len() as u32 - 1
    }

    /// Always false: overlays have at least two positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ports of `position`, indexed by local port number.
    pub fn ports(&self, position: u32) -> &[PortLink] {
        let p = position as usize;
        match (self.offsets.get(p), self.offsets.get(p + 1)) {
            (Some(&a), Some(&b)) => &self.links[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Where `port` of `position` leads, if the port exists.
    #[inline]
    pub fn link(&self, position: u32, port: Port) -> Option<&PortLink> {
        self.links.get(self.link_index(position, port)?)
    }

    /// A number in `0..link_count()` naming the directed link out of `port`
    /// of `position` (for per-link state in drivers).
    #[inline]
    pub fn link_index(&self, position: u32, port: Port) -> Option<usize> {
        let p = position as usize;
        let (a, b) = (*self.offsets.get(p)?, *self.offsets.get(p + 1)?);
        let i = a.checked_add(port)?;
        (i < b).then_some(i as usize)
    }

    /// Number of (position, port) pairs.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// Number of links (undirected edges; a ring of two has two).
    pub fn edge_count(&self) -> usize {
        (0..self.len()).map(|v| self.ports(v).iter().filter(|l| v < l.peer).count()).sum()
    }

    /// Largest number of ports at a position.
    pub fn max_degree(&self) -> u32 {
        self.offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
    }
}

/// The positions of a `rows` x `cols` mesh, or why there is no such mesh
/// (what [`Topology::mesh`] checks before it builds anything).
pub fn mesh_size(rows: u32, cols: u32) -> Result<u32, TopologyError> {
    if rows < 2 || cols < 2 {
        return Err(TopologyError::NotAMesh(format!("{rows} x {cols}: a mesh needs at least 2 rows and 2 columns")));
    }
    rows.checked_mul(cols).ok_or_else(|| TopologyError::NotAMesh(format!("{rows} x {cols} is too large")))
}

/// The most square `rows × cols = n` with `2 ≤ rows ≤ cols`.
pub fn mesh_shape(n: u32) -> Result<(u32, u32), TopologyError> {
    let mut rows = (n as f64).sqrt() as u32;
    while rows > 1 && !n.is_multiple_of(rows) {
        rows -= 1;
    }
    if rows < 2 {
        return Err(TopologyError::NotAMesh(format!(
            "{n} positions cannot form a grid of at least 2 x 2 (give rows and cols, or a size with a divisor from 2 to its square root)"
        )));
    }
    Ok((rows, n / rows))
}

/// The positions of a `rows` x `cols` torus, or why there is no such torus
/// (what [`Topology::torus`] checks before it builds anything).
pub fn torus_size(rows: u32, cols: u32) -> Result<u32, TopologyError> {
    if rows < 3 || cols < 3 {
        return Err(TopologyError::NotATorus(format!("{rows} x {cols}: a torus needs at least 3 rows and 3 columns")));
    }
    rows.checked_mul(cols).ok_or_else(|| TopologyError::NotATorus(format!("{rows} x {cols} is too large")))
}

/// The most square `rows × cols = n` with `3 ≤ rows ≤ cols`.
pub fn torus_shape(n: u32) -> Result<(u32, u32), TopologyError> {
    let mut rows = (n as f64).sqrt() as u32;
    while rows > 2 && !n.is_multiple_of(rows) {
        rows -= 1;
    }
    if rows < 3 {
        return Err(TopologyError::NotATorus(format!(
            "{n} positions cannot form a torus of at least 3 x 3 (give rows and cols, or a size with a divisor from 3 to its square root)"
        )));
    }
    Ok((rows, n / rows))
}

/// Symmetric adjacency lists from an edge list, refusing out-of-range
/// positions, self-loops, repeated edges and disconnected graphs.
fn adjacency(n: u32, edges: &[(u32, u32)]) -> Result<Vec<Vec<u32>>, EdgeError> {
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let mut seen_edges = HashSet::with_capacity(edges.len());
    for &(a, b) in edges {
        if a >= n || b >= n {
            return Err(EdgeError::Outside { a, b, n });
        }
        if a == b {
            return Err(EdgeError::SelfLoop(a));
        }
        if !seen_edges.insert((a.min(b), a.max(b))) {
            return Err(EdgeError::Twice { a, b });
        }
        adj[a as usize].push(b);
        adj[b as usize].push(a);
    }
    let mut seen = vec![false; n as usize];
    let mut stack = vec![0u32];
    seen[0] = true;
    while let Some(v) = stack.pop() {
        for &w in &adj[v as usize] {
            if !seen[w as usize] {
                seen[w as usize] = true;
                stack.push(w);
            }
        }
    }
    if let Some(p) = seen.iter().position(|s| !s) {
        return Err(EdgeError::Disconnected(p as u32));
    }
    Ok(adj)
}

/// A random tree on `n` positions plus up to `n / 2` extra distinct edges,
/// all drawn from `seed` (connected by construction).
pub fn random_graph_edges(n: u32, seed: u64) -> Vec<(u32, u32)> {
    let mut edges = random_tree_edges(n, seed);
    let max_edges = n as u64 * (n as u64 - 1) / 2;
    let extra = (n as u64 / 2).min(max_edges - edges.len() as u64);
    let mut have: HashSet<(u32, u32)> = edges.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x0067_7261_7068);
    let mut added = 0;
    while added < extra {
        let a = rand::Rng::random_range(&mut rng, 0..n);
        let b = rand::Rng::random_range(&mut rng, 0..n);
        if a != b && have.insert((a.min(b), a.max(b))) {
            edges.push((a, b));
            added += 1;
        }
    }
    edges
}

/// The edges of a uniformly random labelled tree on `n` positions, decoded
/// from a random Prüfer sequence drawn from `seed`.
pub fn random_tree_edges(n: u32, seed: u64) -> Vec<(u32, u32)> {
    if n < 2 {
        return Vec::new();
    }
    if n == 2 {
        return vec![(0, 1)];
    }
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x7472_6565);
    let prufer: Vec<u32> = (0..n - 2).map(|_| rand::Rng::random_range(&mut rng, 0..n)).collect();
    let mut degree = vec![1u32; n as usize];
    for &v in &prufer {
        degree[v as usize] += 1;
    }
    // Leaves in increasing order via a min-heap.
    let mut leaves: std::collections::BinaryHeap<std::cmp::Reverse<u32>> =
        (0..n).filter(|&v| degree[v as usize] == 1).map(std::cmp::Reverse).collect();
    let mut edges = Vec::with_capacity(n as usize - 1);
    for &v in &prufer {
        let Some(std::cmp::Reverse(leaf)) = leaves.pop() else { break };
        edges.push((leaf, v));
        degree[v as usize] -= 1;
        if degree[v as usize] == 1 {
            leaves.push(std::cmp::Reverse(v));
        }
    }
    // Exactly two positions are left: they share the last edge.
    if let (Some(std::cmp::Reverse(a)), Some(std::cmp::Reverse(b))) = (leaves.pop(), leaves.pop()) {
        edges.push((a, b));
    }
    edges
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
    /// Given ids in ring order. They may repeat (an anonymous ring gives
    /// every node the same id): drivers that name nodes by id refuse
    /// repeats themselves ([`check_distinct`]).
    Explicit(Vec<u64>),
    /// The algorithm's worst-case arrangement (see the catalogue's `worst_case`).
    WorstCase,
    /// The algorithm's best-case arrangement (see the catalogue's `best_case`).
    BestCase,
}

/// Bad id lists.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// An id appears twice, where ids must be distinct ([`check_distinct`]).
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
                ids.clone()
            }
            IdOrder::WorstCase | IdOrder::BestCase => return Err(IdError::NeedsAlgorithm),
        })
    }
}

/// Reject lists where an id appears twice: for drivers that name a node by
/// its id (a kept leadership's beliefs, faults and initiators given by id).
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
        assert_eq!(
            t.link(4, RIGHT),
            Some(&PortLink { peer: 0, remote_port: LEFT, outgoing: true, label: Compass::None })
        );
        assert_eq!(
            t.link(0, LEFT),
            Some(&PortLink { peer: 4, remote_port: RIGHT, outgoing: false, label: Compass::None })
        );
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
        assert_eq!(IdOrder::Explicit(vec![4, 4]).arrange(2), Ok(vec![4, 4]), "an anonymous ring repeats its id");
        assert_eq!(check_distinct(&[4, 1, 4]), Err(IdError::Duplicate(4)));
        assert_eq!(IdOrder::Explicit(vec![4]).arrange(2), Err(IdError::WrongLength { given: 1, n: 2 }));
    }

    /// Random trees are trees (n - 1 edges, connected, symmetric ports) for many sizes and seeds, and
    /// bad edge lists are refused with the reason.
    #[test]
    fn trees() {
        for n in 2..40 {
            for seed in 0..5 {
                let t = Topology::random_tree(n, seed).unwrap();
                assert_eq!(t.edges().len(), n as usize - 1);
                let degrees: u32 = (0..n).map(|v| t.ports(v).len() as u32).sum();
                assert_eq!(degrees, 2 * (n - 1));
                for v in 0..n {
                    for (p, l) in t.ports(v).iter().enumerate() {
                        assert_eq!(
                            t.link(l.peer, l.remote_port).map(|b| (b.peer, b.remote_port)),
                            Some((v, p as Port))
                        );
                    }
                }
            }
        }
        let star: Vec<(u32, u32)> = (1..6).map(|v| (0, v)).collect();
        assert_eq!(Topology::tree(6, &star).unwrap().max_degree(), 5);
        // A large star takes the sorted path for the centre's ports.
        let star: Vec<(u32, u32)> = (1..100).rev().map(|v| (v, 0)).collect();
        assert_symmetric(&Topology::tree(100, &star).unwrap());
        let not_a_tree = TopologyError::NotATree;
        assert_eq!(Topology::tree(3, &[(0, 1)]).unwrap_err(), not_a_tree(EdgeError::Count { edges: 1, n: 3 }));
        assert_eq!(
            Topology::tree(4, &[(0, 1), (1, 0), (2, 3)]).unwrap_err(),
            not_a_tree(EdgeError::Twice { a: 1, b: 0 })
        );
        assert_eq!(
            Topology::tree(4, &[(0, 1), (2, 3), (3, 2)]).unwrap_err(),
            not_a_tree(EdgeError::Twice { a: 3, b: 2 })
        );
        assert_eq!(Topology::tree(4, &[(0, 1), (1, 2), (2, 2)]).unwrap_err(), not_a_tree(EdgeError::SelfLoop(2)));
        assert_eq!(
            Topology::tree(4, &[(0, 1), (2, 3), (1, 9)]).unwrap_err(),
            not_a_tree(EdgeError::Outside { a: 1, b: 9, n: 4 })
        );
        assert!(Topology::tree(4, &[(0, 1), (2, 3), (3, 1)]).is_ok());
        assert_eq!(
            Topology::tree(5, &[(0, 1), (1, 2), (2, 0), (3, 4)]).unwrap_err(),
            not_a_tree(EdgeError::Disconnected(3))
        );
        assert_eq!(
            Topology::tree(4, &[(0, 1), (1, 0), (2, 3)]).unwrap_err().to_string(),
            "not a tree: edge 1-0 is listed twice"
        );
    }

    /// Every port of `t` leads to a neighbour whose remote port leads straight back.
    fn assert_symmetric(t: &Topology) {
        for v in 0..t.len() {
            for (p, l) in t.ports(v).iter().enumerate() {
                assert_eq!(t.link(l.peer, l.remote_port).map(|b| (b.peer, b.remote_port)), Some((v, p as Port)));
            }
        }
    }

    /// Meshes have the grid's edges, compass labels that point the right way, corners of degree 2, and
    /// refuse shapes thinner than 2 x 2; the most square shape is chosen from n.
    #[test]
    fn meshes() {
        let t = Topology::mesh(3, 4).unwrap();
        assert_eq!(t.len(), 12);
        assert_eq!(t.edges().len(), 3 * 3 + 4 * 2);
        assert_symmetric(&t);
        // Position 5 is row 1, column 1: all four directions.
        let labels: Vec<(u32, Compass)> = t.ports(5).iter().map(|l| (l.peer, l.label)).collect();
        assert_eq!(labels, vec![(1, Compass::North), (6, Compass::East), (9, Compass::South), (4, Compass::West)]);
        // Corners have two ports, border nodes three.
        assert_eq!([0, 3, 8, 11].map(|v| t.ports(v).len()), [2; 4]);
        assert_eq!(
            t.ports(1).iter().map(|l| l.label).collect::<Vec<_>>(),
            vec![Compass::East, Compass::South, Compass::West]
        );
        assert!(matches!(Topology::mesh(1, 5), Err(TopologyError::NotAMesh(_))));
        assert_eq!(mesh_shape(12), Ok((3, 4)));
        assert_eq!(mesh_shape(16), Ok((4, 4)));
        assert!(matches!(mesh_shape(13), Err(TopologyError::NotAMesh(m)) if m.contains("13")));
        assert_eq!(Topology::build(TopologyKind::Mesh, 6, 0).unwrap().edges().len(), 7);
    }

    /// Tori have 2n links, four ports everywhere in the order N, E, S, W pointing the right way round the
    /// wrap, and refuse shapes thinner than 3 x 3; the most square shape is chosen from n.
    #[test]
    fn tori() {
        let t = Topology::torus(3, 4).unwrap();
        assert_eq!((t.len(), t.edge_count()), (12, 24));
        assert_symmetric(&t);
        let labels: Vec<(u32, Compass)> = t.ports(0).iter().map(|l| (l.peer, l.label)).collect();
        assert_eq!(labels, vec![(8, Compass::North), (1, Compass::East), (4, Compass::South), (3, Compass::West)]);
        assert!(matches!(Topology::torus(2, 5), Err(TopologyError::NotATorus(_))));
        assert_eq!(torus_shape(16), Ok((4, 4)));
        assert_eq!(torus_shape(18), Ok((3, 6)));
        assert!(matches!(torus_shape(8), Err(TopologyError::NotATorus(m)) if m.contains('8')));
        assert_eq!(Topology::build(TopologyKind::Torus, 9, 0).unwrap().edge_count(), 18);
    }

    /// Hypercubes link each position to the d positions one bit away, port i across dimension i, and
    /// refuse sizes that are not powers of two with a message that says so.
    #[test]
    fn hypercubes() {
        for d in 1..6 {
            let t = Topology::hypercube(1 << d).unwrap();
            assert_eq!(t.edge_count() as u32, d * (1 << d) / 2);
            assert_symmetric(&t);
            for v in 0..t.len() {
                for (i, l) in t.ports(v).iter().enumerate() {
                    assert_eq!((l.peer, l.remote_port), (v ^ (1 << i), i as Port));
                }
            }
        }
        let e = Topology::build(TopologyKind::Hypercube, 12, 0).unwrap_err();
        assert_eq!(e, TopologyError::NotAHypercube(12));
        assert!(e.to_string().contains("2^d"), "{e}");
    }

    /// The chordal complete graph's port p of v leads p + 1 positions on, and back on the chord n - p - 1.
    #[test]
    fn chordal_complete_graphs() {
        for n in 2..9 {
            let t = Topology::complete_chordal(n).unwrap();
            assert_eq!(t.edge_count() as u32, n * (n - 1) / 2);
            assert_symmetric(&t);
        }
        let t = Topology::complete_chordal(5).unwrap();
        assert_eq!(t.ports(3).iter().map(|l| l.peer).collect::<Vec<_>>(), vec![4, 0, 1, 2]);
        assert_eq!(t.link(3, 1).map(|l| l.remote_port), Some(2));
    }

    /// The complete graph has n(n-1)/2 edges and port p of v leads to the p-th other position.
    #[test]
    fn complete_graphs() {
        let t = Topology::complete(5).unwrap();
        assert_eq!(t.edges().len(), 10);
        assert_eq!(t.edge_count(), 10);
        assert_symmetric(&t);
        assert_eq!(t.ports(2).iter().map(|l| l.peer).collect::<Vec<_>>(), vec![0, 1, 3, 4]);
    }

    /// Random graphs are connected, simple, have n - 1 + n/2 edges, and bad edge lists are refused.
    #[test]
    fn graphs() {
        for n in 2..30 {
            for seed in 0..4 {
                let t = Topology::random_graph(n, seed).unwrap();
                let want = (n - 1 + n / 2).min(n * (n - 1) / 2);
                assert_eq!(t.edges().len() as u32, want, "n={n} seed={seed}");
                assert_symmetric(&t);
            }
        }
        assert_eq!(Topology::graph(3, &[(0, 1)]).unwrap_err(), TopologyError::NotAGraph(EdgeError::Disconnected(2)));
        assert_eq!(
            Topology::graph(3, &[(0, 1), (1, 0), (1, 2)]).unwrap_err(),
            TopologyError::NotAGraph(EdgeError::Twice { a: 1, b: 0 })
        );
        assert!(Topology::graph(3, &[(0, 1), (1, 2), (2, 0)]).is_ok());
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
