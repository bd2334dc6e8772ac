//! The message kinds of program-defined algorithms (the `ringleader-program`
//! crate, docs/programs.md), known to the whole process so that a
//! [`Msg::Program`](super::Msg::Program) reads as its program wrote it
//! ("election (id 7)") wherever messages are told in words or drawn.
//!
//! A program's messages travel as [`Msg::Program`](super::Msg::Program) or
//! [`Msg::ProgramNotice`](super::Msg::ProgramNotice) with a `kind` that is the
//! program's tag (24 bits of a hash of its name, so two processes that
//! installed the same program agree without talking) shifted left by
//! [`KIND_BITS`], plus the kind's index in its manifest. [`register`] makes a
//! program's kinds known; [`kind_of`] and [`split`] compute and take apart a
//! `kind`.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

/// Bits of a `kind` that index the program's kinds: at most 16 kinds.
pub const KIND_BITS: u32 = 4;
/// Most message kinds a program declares.
pub const MAX_KINDS: usize = 1 << KIND_BITS;
/// Most fields a kind carries (`a` to `d` of [`Msg::Program`](super::Msg::Program)).
pub const MAX_FIELDS: usize = 4;

/// One kind of a program's messages, as its manifest names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// The kind's name, e.g. `election`.
    pub name: &'static str,
    /// Its fields' names, in the order `a`, `b`, `c`, `d`.
    pub fields: Vec<&'static str>,
}

/// The tag of the program named `name`: 24 bits of its FNV-1a hash (never 0).
pub fn tag(name: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (h >> 8).max(1)
}

/// The `kind` of the program tagged `tag`'s kind number `index`.
pub fn kind_of(tag: u32, index: usize) -> u32 {
    (tag << KIND_BITS) | (index as u32 & (MAX_KINDS as u32 - 1))
}

/// A `kind` taken apart: the program's tag and the kind's index.
pub fn split(kind: u32) -> (u32, usize) {
    (kind >> KIND_BITS, (kind & (MAX_KINDS as u32 - 1)) as usize)
}

/// Every registered program by tag: its name and kinds.
type Registry = RwLock<HashMap<u32, (String, Vec<KindInfo>)>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// Two programs whose names give the same tag.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("programs `{0}` and `{1}` have the same message tag: rename one")]
pub struct TagTaken(pub String, pub String);

/// Make the kinds of the program `name` known (again: the same program may
/// be registered twice, e.g. reloaded). Refused when another program's name
/// has the same tag.
pub fn register(name: &str, kinds: Vec<KindInfo>) -> Result<u32, TagTaken> {
    let tag = tag(name);
    let mut map = registry().write().unwrap_or_else(|e| e.into_inner());
    if let Some((other, _)) = map.get(&tag)
        && other != name
    {
        return Err(TagTaken(other.clone(), name.to_string()));
    }
    map.insert(tag, (name.to_string(), kinds));
    Ok(tag)
}

fn with_kind<T>(kind: u32, f: impl FnOnce(&KindInfo) -> T) -> Option<T> {
    let (tag, index) = split(kind);
    let map = registry().read().unwrap_or_else(|e| e.into_inner());
    map.get(&tag).and_then(|(_, kinds)| kinds.get(index)).map(f)
}

/// The name of a registered program's kind.
pub fn kind_name(kind: u32) -> Option<&'static str> {
    with_kind(kind, |k| k.name)
}

/// A registered program's message fields in words, by their manifest names
/// (`id 7, phase 2`; 0 left out, as for the built-in messages).
pub fn describe(kind: u32, values: [u64; MAX_FIELDS]) -> Option<String> {
    with_kind(kind, |k| {
        k.fields
            .iter()
            .zip(values)
            .filter(|&(_, v)| v != 0)
            .map(|(name, v)| format!("{name} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// Most distinct failure texts [`failure`] keeps (each names its node and step, so nearly every
/// failure is distinct: a class's worth of broken programs stays well under it, at about 200 bytes
/// a text).
pub const MAX_FAILURE_TEXTS: usize = 65_536;

/// `text` as a `&'static str` for [`Effect::Fail`](super::Effect::Fail):
/// each distinct text is kept once, up to [`MAX_FAILURE_TEXTS`]; beyond, a
/// fixed text says so (a program that fails in ever new ways cannot grow
/// the process's memory without end).
pub fn failure(text: &str) -> &'static str {
    static TEXTS: OnceLock<RwLock<std::collections::HashSet<&'static str>>> = OnceLock::new();
    let texts = TEXTS.get_or_init(Default::default);
    if let Some(&kept) = texts.read().unwrap_or_else(|e| e.into_inner()).get(text) {
        return kept;
    }
    let mut texts = texts.write().unwrap_or_else(|e| e.into_inner());
    if let Some(&kept) = texts.get(text) {
        return kept;
    }
    if texts.len() >= MAX_FAILURE_TEXTS {
        return "the program failed (its text was not kept: too many distinct failures in this process)";
    }
    let kept: &'static str = Box::leak(text.to_string().into_boxed_str());
    texts.insert(kept);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Msg;

    /// A registered program's message reads with its own kind and field names; an
    /// unregistered tag falls back to the generic words; a second program whose name has the
    /// same tag is refused, the same program again is not.
    #[test]
    fn program_messages_read_as_their_manifest_names_them() {
        let tag = register("words-test", vec![KindInfo { name: "elected", fields: vec!["leader", "hops"] }]).unwrap();
        let m = Msg::ProgramNotice { kind: kind_of(tag, 0), a: 7, b: 0, c: 0, d: 0 };
        assert_eq!(m.in_words(), "elected (leader 7)");
        assert_eq!(m.kind_name(), "elected");
        assert_eq!(split(kind_of(tag, 3)), (tag, 3));
        assert!(register("words-test", vec![]).is_ok());
        let unknown = Msg::Program { kind: kind_of(tag ^ 1, 0), a: 7, b: 0, c: 0, d: 0 };
        assert_eq!(unknown.kind_name(), "program");
        registry().write().unwrap().insert(super::tag("collide-me"), ("someone-else".into(), vec![]));
        assert_eq!(register("collide-me", vec![]), Err(TagTaken("someone-else".into(), "collide-me".into())));
    }

    /// A failure text is kept once: the same text twice is the same pointer.
    #[test]
    fn failure_texts_are_kept_once() {
        let a = failure("step 3 (message on port 1): reply field `out[0].port`: 7 is no port");
        let b = failure(&String::from("step 3 (message on port 1): reply field `out[0].port`: 7 is no port"));
        assert!(std::ptr::eq(a, b));
    }
}
