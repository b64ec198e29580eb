//! Parsers for `--set key=value` values, shared by every model's config so that a
//! boolean, a count or a number is read and refused the same way everywhere.

pub fn parse_bool(v: &str) -> Result<bool, String> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("`{v}` is not a boolean: expected true or false")),
    }
}

pub fn parse_u32(v: &str) -> Result<u32, String> {
    v.parse::<u32>().map_err(|_| format!("`{v}` is not a whole number from 0 to {}", u32::MAX))
}

/// A finite number; NaN and infinities are refused.
pub fn parse_f64(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(format!("`{v}` is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_and_refused_with_the_value_named() {
        assert_eq!(parse_bool("true"), Ok(true));
        assert!(parse_bool("yes").unwrap_err().contains("`yes`"));
        assert_eq!(parse_u32("42"), Ok(42));
        assert!(parse_u32("-1").is_err());
        assert_eq!(parse_f64("0.5"), Ok(0.5));
        assert!(parse_f64("nan").is_err());
        assert!(parse_f64("inf").is_err());
    }
}
