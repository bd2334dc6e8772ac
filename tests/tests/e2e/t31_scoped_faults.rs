//! (issue 50: being written)
