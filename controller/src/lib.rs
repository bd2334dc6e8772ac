//! Ringleader controller.
