//! Where each moment goes across the chart: to scale, with idle stretches compressed and each
//! failover given its share of the width, or on Lamport's causal clock.

use super::{Arrow, Axis};

/// Width of a compressed idle stretch.
pub(super) const GAP_PX: f64 = 30.0;
/// An idle stretch is compressed if to scale it would be wider than this.
const IDLE_PX: f64 = 60.0;

/// A length of time in `unit`, microseconds and milliseconds shown in the
/// largest unit that keeps it a readable number.
pub(super) fn duration_text(len: u64, unit: &str) -> String {
    match unit {
        "µs" if len >= 10_000_000 => format!("{} s", len / 1_000_000),
        "µs" if len >= 1_000_000 => format!("{:.1} s", len as f64 / 1e6),
        "µs" if len >= 10_000 => format!("{} ms", len / 1_000),
        "µs" if len >= 1_000 => format!("{:.1} ms", len as f64 / 1e3),
        "ms" | "virtual ms" if len >= 10_000 => format!("{} s", len / 1_000),
        "ms" | "virtual ms" if len >= 1_000 => format!("{:.1} s", len as f64 / 1e3),
        "virtual ms" => format!("{len} ms"),
        _ => format!("{len} {unit}"),
    }
}

/// events in time order (receipts before sendings of the same instant, which
/// they may cause), each one more than the node's previous event, a receipt
/// also more than its sending. Clocks that disagree across hosts cannot
/// break it: a receipt waits for its sending, whatever the times say.
pub fn causal_times(arrows: &[Arrow], nodes: usize) -> Vec<(u64, Option<u64>)> {
    // Each node's events: (time, receipt before sending, arrow, is a receipt).
    let mut queues: Vec<Vec<(u64, bool, usize)>> = vec![Vec::new(); nodes];
    for (i, a) in arrows.iter().enumerate() {
        if let Some(q) = queues.get_mut(a.from as usize) {
            q.push((a.sent, true, i));
        }
        if let (Some(r), Some(q)) = (a.received, queues.get_mut(a.to as usize)) {
            q.push((r, false, i));
        }
    }
    for q in &mut queues {
        q.sort_unstable();
        q.reverse();
    }
    let mut sent: Vec<Option<u64>> = vec![None; arrows.len()];
    let mut received: Vec<Option<u64>> = vec![None; arrows.len()];
    let mut clock = vec![0u64; nodes];
    let mut left: usize = queues.iter().map(Vec::len).sum();
    while left > 0 {
        let mut progress = false;
        for (p, q) in queues.iter_mut().enumerate() {
            while let Some(&(_, is_send, i)) = q.last() {
                if is_send {
                    clock[p] += 1;
                    sent[i] = Some(clock[p]);
                } else if let Some(s) = sent[i] {
                    clock[p] = clock[p].max(s) + 1;
                    received[i] = Some(clock[p]);
                } else {
                    break;
                }
                q.pop();
                left -= 1;
                progress = true;
            }
        }
        if !progress {
            // A receipt whose sending never comes first (times that contradict each other at
            // both ends): take the first node's waiting receipt as if sent at its clock.
            if let Some((p, q)) = queues.iter_mut().enumerate().find(|(_, q)| !q.is_empty())
                && let Some((_, _, i)) = q.pop()
            {
                clock[p] += 1;
                received[i] = Some(clock[p]);
                left -= 1;
            }
        }
    }
    sent.into_iter().zip(received).map(|(s, r)| (s.unwrap_or(0), r)).collect()
}

/// `t` on an axis: itself, or on the causal axis the largest clock of any event at or before it.
pub(super) fn on_axis(axis: Axis, moments: &[(u64, u64)], t: u64) -> u64 {
    match axis {
        Axis::Causal => moments.partition_point(|m| m.0 <= t).checked_sub(1).map_or(0, |i| moments[i].1),
        _ => t,
    }
}

/// A fault's turn on the axis: when a node crashed or recovered, or a partition began or healed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Turn {
    /// When, on the axis.
    pub(super) at: u64,
    /// Something was lost (a crash, a partition), not given back (a recovery, a heal).
    pub(super) loss: bool,
}

/// The weight of an episode of a kept leadership's axis that is not a failover but holds election
/// work: its start, a recovery's or a heal's (a failover weighs 1).
const MINOR_EPISODE: f64 = 0.35;
/// The weight of an episode with no election work (a crash of a follower, a heal that changed
/// nothing): its marks stay apart.
const QUIET_EPISODE: f64 = 0.1;

/// Where each time value goes across the chart: piecewise linear through
/// knots (time, x), with the compressed idle stretches it found.
pub(super) struct Scale {
    knots: Vec<(u64, f64)>,
    /// Idle stretches: (from, to) in axis units.
    pub(super) gaps: Vec<(u64, u64)>,
}

impl Scale {
    /// `values`: every moment drawn; `delay`: a typical message delay, below
    /// four of which no stretch is idle.
    ///
    /// The idle stretches are chosen on the compressed axis, not the axis to
    /// scale: the longest stretch goes first, and each one after it is
    /// compressed if, with those before it compressed, it would still be
    /// wider than [`IDLE_PX`]. (A failover's detection wait, short beside the
    /// seconds of a kept leadership, is long beside its bursts once those
    /// seconds are compressed.) Compressing a stretch only widens the rest,
    /// so once the longest left is narrow enough, all are. At most half the
    /// width goes to compressed stretches.
    ///
    /// `faults`: when nodes crashed or recovered and partitions began or healed, each a [`Turn`]:
    /// its time and whether it lost something (a crash, a partition) or gave it back; `work`: when
    /// election messages (not upkeep) were on their way, from sending to receipt. The axis is cut into episodes at the faults: the
    /// start, then each fault until the next. A kept leadership's story is its failovers, so each
    /// episode that begins with a loss and holds election work weighs 1, the start and the
    /// episodes of recoveries and heals with work weigh [`MINOR_EPISODE`], and an episode without
    /// work [`QUIET_EPISODE`]: with one crash its failover gets three quarters of the room left by
    /// the idle bands, with several each its share.
    pub(super) fn new(
        mut values: Vec<u64>,
        left: f64,
        width: f64,
        compress: bool,
        delay: u64,
        faults: &[Turn],
        work: &[(u64, u64)],
    ) -> Scale {
        values.push(0);
        values.sort_unstable();
        values.dedup();
        let end = values.last().copied().unwrap_or(0).max(1);
        let linear = Scale { knots: vec![(0, left), (end, left + width)], gaps: Vec::new() };
        if !compress {
            return linear;
        }
        let mut candidates: Vec<(u64, u64)> =
            values.windows(2).map(|w| (w[0], w[1])).filter(|&(a, b)| b - a > 4 * delay).collect();
        candidates.sort_by_key(|&(a, b)| (std::cmp::Reverse(b - a), a));
        let most = ((width / 2.0) / GAP_PX) as usize;
        let mut gaps: Vec<(u64, u64)> = Vec::new();
        let mut idle = 0u64;
        for (a, b) in candidates {
            let active = end - idle;
            let per_unit = (width - GAP_PX * gaps.len() as f64) / active as f64;
            if gaps.len() >= most || (b - a) as f64 * per_unit <= IDLE_PX {
                break;
            }
            gaps.push((a, b));
            idle += b - a;
        }
        if gaps.is_empty() && faults.is_empty() {
            return linear;
        }
        gaps.sort_unstable();
        let active = end - idle;
        if active == 0 {
            let per_gap = width / gaps.len() as f64;
            let mut knots = vec![(0, left)];
            for (i, &(a, b)) in gaps.iter().enumerate() {
                knots.push((a, left + per_gap * i as f64));
                knots.push((b, left + per_gap * (i + 1) as f64));
            }
            knots.dedup_by_key(|k| k.0);
            return Scale { knots, gaps };
        }
        // The stretches between the idle bands, cut at the faults: each in one episode.
        let mut cuts: Vec<u64> = faults.iter().map(|f| f.at).filter(|&t| t > 0 && t < end).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut bursts: Vec<(u64, u64)> = Vec::new();
        let mut t = 0u64;
        for &(a, b) in gaps.iter().chain([(end, end)].iter()) {
            let inside: Vec<u64> = cuts.iter().copied().filter(|&c| c > t && c < a).collect();
            for c in inside {
                bursts.push((t, c));
                t = c;
            }
            bursts.push((t, a));
            t = b;
        }
        let moments = |(a, b): (u64, u64)| values.partition_point(|&v| v <= b) - values.partition_point(|&v| v < a);
        // Episode of a stretch: how many fault times are at or before its start.
        let episode = |w: (u64, u64)| cuts.partition_point(|&c| c <= w.0);
        let episodes = cuts.len() + 1;
        let mut weights = vec![0.0f64; episodes];
        for (e, weight) in weights.iter_mut().enumerate() {
            let from = if e == 0 { 0 } else { cuts[e - 1] };
            let until = cuts.get(e).copied().unwrap_or(u64::MAX);
            let busy = work.iter().any(|&(a, b)| a < until && b >= from);
            let loses = e > 0 && faults.iter().any(|f| f.at == from && f.loss);
            *weight = match (busy, loses) {
                (true, true) => 1.0,
                (true, false) if episodes > 1 => MINOR_EPISODE,
                (true, false) => 1.0,
                (false, _) => QUIET_EPISODE,
            };
        }
        // Within an episode its stretches share its room a quarter by their time and three
        // quarters by their moments: a burst of many messages in little time still gets room.
        // Within a stretch, time is to scale.
        let mut time_in = vec![0u64; episodes];
        let mut moments_in = vec![0usize; episodes];
        for &w in &bursts {
            time_in[episode(w)] += w.1 - w.0;
            moments_in[episode(w)] += if w.1 > w.0 { moments(w) } else { 0 };
        }
        // Episodes with no stretch of time give their weight up.
        for (weight, &time) in weights.iter_mut().zip(&time_in) {
            if time == 0 {
                *weight = 0.0;
            }
        }
        let total: f64 = weights.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        let share = |w: (u64, u64)| {
            if w.1 == w.0 {
                return 0.0;
            }
            let e = episode(w);
            let by =
                0.25 * (w.1 - w.0) as f64 / time_in[e] as f64 + 0.75 * moments(w) as f64 / moments_in[e].max(1) as f64;
            weights[e] / total * by
        };
        let room = width - GAP_PX * gaps.len() as f64;
        let mut knots = vec![(0, left)];
        let mut x = left;
        let mut gap = gaps.iter().peekable();
        for &w in &bursts {
            x += room * share(w);
            knots.push((w.1, x));
            if let Some(&&(a, b)) = gap.peek()
                && a == w.1
            {
                x += GAP_PX;
                knots.push((b, x));
                gap.next();
            }
        }
        knots.dedup_by_key(|k| k.0);
        Scale { knots, gaps }
    }

    pub(super) fn end(&self) -> u64 {
        self.knots.last().map_or(1, |k| k.0)
    }

    pub(super) fn x(&self, t: u64) -> f64 {
        let i = self.knots.partition_point(|k| k.0 <= t);
        match (i.checked_sub(1).map(|j| self.knots[j]), self.knots.get(i)) {
            (Some((t0, x0)), Some(&(t1, x1))) => x0 + (x1 - x0) * (t - t0) as f64 / (t1 - t0) as f64,
            (Some((_, x0)), None) => x0,
            (None, Some(&(_, x1))) => x1,
            (None, None) => 0.0,
        }
    }
}
