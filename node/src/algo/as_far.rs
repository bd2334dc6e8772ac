//! placeholder
use super::*;
/// placeholder
#[derive(Debug)]
pub struct AsFar {
    id: u64,
}
impl AsFar {
    /// New node.
    pub fn new(c: &NodeContext) -> Self {
        AsFar { id: c.id }
    }
}
impl Algorithm for AsFar {
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
