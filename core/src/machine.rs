//! The [`machine!`](crate::machine) macro: a catalogue entry's state machine
//! named once. Kept apart from the simulator and the facts it joins.

/// The [`Machine`](crate::spec::Machine) of a catalogue entry, its `build`
/// and `simulate`, from the one constructor `Type::new(&NodeContext)` of its
/// state machine. An entry writes `machine: machine!(Type::new)`. It lives in
/// its own file, so that the facts (`spec`) do not depend on the simulator it
/// names.
#[macro_export]
macro_rules! machine {
    ($new:path) => {
        $crate::spec::Machine {
            build: &|c| ::std::boxed::Box::new($new(c)),
            simulate: &|s, t, i, k, r, c| $crate::sim::run_with(s, t, i, k, r, c, $new),
        }
    };
}
