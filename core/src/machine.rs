//! The [`machine!`](crate::machine) macro: a catalogue entry's state machine
//! named once. Kept apart from the simulator and the facts it joins.

/// The `build` and `simulate` of a catalogue entry, from the one constructor
/// `Type::new(&NodeContext)` of its state machine, every other field at its
/// default ([`AlgorithmSpec::running`](crate::spec::AlgorithmSpec::running)). An entry writes
/// `AlgorithmSpec { name: ..., ..machine!(Type::new) }`. It lives in its own
/// file, so that the facts (`spec`) do not depend on the simulator it names.
#[macro_export]
macro_rules! machine {
    ($new:path) => {
        $crate::spec::AlgorithmSpec::running(
            |c| ::std::boxed::Box::new($new(c)),
            |s, t, i, k, r, c| $crate::sim::run_with(s, t, i, k, r, c, $new),
        )
    };
}
