//! A manifest's `bound`: a formula over `n` (positions) and `k`
//! (initiators), parsed once and evaluated in `u64` with saturation.
//!
//! Grammar (whitespace anywhere between tokens):
//!
//! ```text
//! sum     = product (("+" | "-") product)*
//! product = power (("*" | "/") power)*
//! power   = atom ("^" power)?                  right-associative
//! atom    = integer | "n" | "k" | "(" sum ")"
//!         | ("log2" | "ceil" | "floor") "(" sum ")"
//!         | ("min" | "max") "(" sum "," sum ")"
//! ```
//!
//! `/` is integer division (rounding down); `ceil(a / b)` rounds that one
//! division up; `log2(x)` is the ceiling of the base-2 logarithm (0 for 0
//! and 1). Subtraction stops at 0, anything that overflows stays at
//! `u64::MAX`, and a division by 0 gives `u64::MAX` (a bound that claims
//! nothing rather than a wrong one).

use std::fmt;

/// A parsed bound formula.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formula {
    text: String,
    expr: Expr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Expr {
    Num(u64),
    N,
    K,
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Pow(Box<Expr>, Box<Expr>),
    Log2(Box<Expr>),
    Ceil(Box<Expr>),
    Floor(Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
}

/// Why a formula did not parse: what was expected, at which character (0-based).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at character {at}: {what}")]
pub struct FormulaError {
    /// The character (0-based) where parsing stopped.
    pub at: usize,
    /// What was wrong there.
    pub what: String,
}

/// Longest formula taken, in bytes.
pub const MAX_FORMULA_BYTES: usize = 256;
/// Deepest nesting of parentheses and functions taken.
const MAX_DEPTH: usize = 32;

impl Formula {
    /// Parse `text`.
    pub fn parse(text: &str) -> Result<Formula, FormulaError> {
        if text.len() > MAX_FORMULA_BYTES {
            return Err(FormulaError { at: MAX_FORMULA_BYTES, what: format!("longer than {MAX_FORMULA_BYTES} bytes") });
        }
        let mut p = Parser { chars: text.chars().collect(), at: 0, depth: 0 };
        p.skip_space();
        if p.at == p.chars.len() {
            return Err(FormulaError { at: 0, what: "empty formula".into() });
        }
        let expr = p.sum()?;
        p.skip_space();
        if p.at < p.chars.len() {
            return Err(p.error(format!("unexpected `{}`", p.chars[p.at])));
        }
        Ok(Formula { text: text.trim().to_string(), expr })
    }

    /// The formula as written (trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its value for `n` positions and `k` initiators.
    pub fn eval(&self, n: u64, k: u64) -> u64 {
        self.expr.eval(n, k)
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Expr {
    fn eval(&self, n: u64, k: u64) -> u64 {
        match self {
            Expr::Num(v) => *v,
            Expr::N => n,
            Expr::K => k,
            Expr::Add(a, b) => a.eval(n, k).saturating_add(b.eval(n, k)),
            Expr::Sub(a, b) => a.eval(n, k).saturating_sub(b.eval(n, k)),
            Expr::Mul(a, b) => a.eval(n, k).saturating_mul(b.eval(n, k)),
            Expr::Div(a, b) => match b.eval(n, k) {
                0 => u64::MAX,
                d => a.eval(n, k) / d,
            },
            Expr::Pow(a, b) => {
                let e = u32::try_from(b.eval(n, k)).unwrap_or(u32::MAX);
                a.eval(n, k).saturating_pow(e)
            }
            Expr::Log2(a) => match a.eval(n, k) {
                0 | 1 => 0,
                x => u64::from(64 - (x - 1).leading_zeros()),
            },
            Expr::Ceil(a) => match &**a {
                Expr::Div(x, y) => match y.eval(n, k) {
                    0 => u64::MAX,
                    d => x.eval(n, k).div_ceil(d),
                },
                other => other.eval(n, k),
            },
            Expr::Floor(a) => a.eval(n, k),
            Expr::Min(a, b) => a.eval(n, k).min(b.eval(n, k)),
            Expr::Max(a, b) => a.eval(n, k).max(b.eval(n, k)),
        }
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn error(&self, what: impl Into<String>) -> FormulaError {
        FormulaError { at: self.at, what: what.into() }
    }

    fn skip_space(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.get(self.at).copied()
    }

    fn expect(&mut self, c: char) -> Result<(), FormulaError> {
        match self.peek() {
            Some(got) if got == c => {
                self.at += 1;
                Ok(())
            }
            Some(got) => Err(self.error(format!("expected `{c}`, found `{got}`"))),
            None => Err(self.error(format!("expected `{c}`, found the end"))),
        }
    }

    fn sum(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let right = self.product()?;
            left = if op == '+' { Expr::Add(left.into(), right.into()) } else { Expr::Sub(left.into(), right.into()) };
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.power()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.at += 1;
            let right = self.power()?;
            left = if op == '*' { Expr::Mul(left.into(), right.into()) } else { Expr::Div(left.into(), right.into()) };
        }
        Ok(left)
    }

    fn power(&mut self) -> Result<Expr, FormulaError> {
        let base = self.atom()?;
        if self.peek() == Some('^') {
            self.at += 1;
            let exp = self.nested(Self::power)?;
            return Ok(Expr::Pow(base.into(), exp.into()));
        }
        Ok(base)
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Expr, FormulaError>) -> Result<Expr, FormulaError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH}")));
        }
        self.depth += 1;
        let e = f(self);
        self.depth -= 1;
        e
    }

    fn atom(&mut self) -> Result<Expr, FormulaError> {
        let Some(c) = self.peek() else {
            return Err(self.error("expected a number, `n`, `k`, `(` or a function, found the end"));
        };
        if c.is_ascii_digit() {
            let start = self.at;
            while self.chars.get(self.at).is_some_and(|c| c.is_ascii_digit()) {
                self.at += 1;
            }
            let digits: String = self.chars[start..self.at].iter().collect();
            return digits
                .parse()
                .map(Expr::Num)
                .map_err(|_| FormulaError { at: start, what: format!("{digits} is larger than 2^64 - 1") });
        }
        if c == '(' {
            self.at += 1;
            let e = self.nested(Self::sum)?;
            self.expect(')')?;
            return Ok(e);
        }
        if c.is_ascii_alphabetic() {
            let start = self.at;
            while self.chars.get(self.at).is_some_and(|c| c.is_ascii_alphanumeric()) {
                self.at += 1;
            }
            let word: String = self.chars[start..self.at].iter().collect();
            return match word.as_str() {
                "n" => Ok(Expr::N),
                "k" => Ok(Expr::K),
                "log2" | "ceil" | "floor" => {
                    self.expect('(')?;
                    let a = self.nested(Self::sum)?;
                    self.expect(')')?;
                    Ok(match word.as_str() {
                        "log2" => Expr::Log2(a.into()),
                        "ceil" => Expr::Ceil(a.into()),
                        _ => Expr::Floor(a.into()),
                    })
                }
                "min" | "max" => {
                    self.expect('(')?;
                    let a = self.nested(Self::sum)?;
                    self.expect(',')?;
                    let b = self.nested(Self::sum)?;
                    self.expect(')')?;
                    Ok(if word == "min" { Expr::Min(a.into(), b.into()) } else { Expr::Max(a.into(), b.into()) })
                }
                _ => Err(FormulaError {
                    at: start,
                    what: format!("unknown name `{word}`: the names are n, k, log2, ceil, floor, min and max"),
                }),
            };
        }
        Err(self.error(format!("unexpected `{c}`: expected a number, `n`, `k`, `(` or a function")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, n: u64, k: u64) -> u64 {
        Formula::parse(text).unwrap_or_else(|e| panic!("{text}: {e}")).eval(n, k)
    }

    /// Each operator and function gives its documented value, with precedence and
    /// right-associative powers; overflow saturates, subtraction stops at 0.
    #[test]
    fn formulas_evaluate_as_documented() {
        assert_eq!(eval("n*(n+1)/2 + n", 5, 5), 20);
        assert_eq!(eval("2 + 3 * 4", 0, 0), 14);
        assert_eq!(eval("2^3^2", 0, 0), 512);
        assert_eq!(eval("8 * n * log2(n) + k", 5, 2), 8 * 5 * 3 + 2);
        assert_eq!(eval("log2(1) + log2(2) + log2(1024) + log2(1025)", 0, 0), 1 + 10 + 11);
        assert_eq!(eval("ceil(n / 2)", 5, 0), 3);
        assert_eq!(eval("floor(n / 2)", 5, 0), 2);
        assert_eq!(eval("n / 2", 5, 0), 2);
        assert_eq!(eval("min(n, k) + max(n, k)", 4, 9), 13);
        assert_eq!(eval("k - n", 3, 1), 0);
        assert_eq!(eval("n ^ 100", 3, 0), u64::MAX);
        assert_eq!(eval("n / (k - k)", 3, 1), u64::MAX);
        assert_eq!(eval("  n  ", 7, 0), 7);
    }

    /// A malformed formula is refused with the character where it went wrong and what was expected.
    #[test]
    fn malformed_formulas_name_where_they_go_wrong() {
        for (text, at, words) in [
            ("", 0, "empty"),
            ("n +", 3, "found the end"),
            ("n(n+1)", 1, "unexpected `(`"),
            ("2 * m", 4, "unknown name `m`"),
            ("log2 n", 5, "expected `(`"),
            ("min(n)", 5, "expected `,`"),
            ("(n + 1", 6, "expected `)`"),
            ("-n", 0, "unexpected `-`"),
            ("n ** 2", 3, "unexpected `*`"),
            ("99999999999999999999", 0, "larger than"),
        ] {
            let e = Formula::parse(text).expect_err(text);
            assert_eq!(e.at, at, "{text}: {e}");
            assert!(e.what.contains(words), "{text}: {e}");
        }
        let deep = format!("{}n{}", "(".repeat(40), ")".repeat(40));
        assert!(Formula::parse(&deep).unwrap_err().what.contains("nested deeper"));
    }
}
