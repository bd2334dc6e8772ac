//! placeholder
use super::*;
/// placeholder
#[derive(Debug)]
pub struct ControlledDistance {
    id: u64,
}
impl ControlledDistance {
    /// New node.
    pub fn new(c: &NodeContext) -> Self {
        ControlledDistance { id: c.id }
    }
}
impl Algorithm for ControlledDistance {
    fn on_start(&mut self, _out: &mut Outbox) {
        let _ = self.id;
    }
    fn on_message(&mut self, _port: Port, _msg: Msg, _out: &mut Outbox) -> Result<(), AlgoError> {
        Ok(())
    }
    fn decision(&self) -> Option<Decision> {
        None
    }
    fn state(&self) -> &'static str {
        "asleep"
    }
}
