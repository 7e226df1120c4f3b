//! The verdict of a verifying command (`vdf verify`, `rsa verify`, `accumulator
//! verify`, `timelock open`) on stdout: a text line, or with `--json` one object `{"valid": true, ...}`.
//! A checked and invalid input (exit 1) is the line `invalid: REASON` on stderr (not an
//! `error:`), and with `--json` also `{"valid": false, "reason": ...}` on stdout, so a
//! script that reads stdout gets one object for every verdict; an input that cannot be
//! read or is malformed (exit 2) gets no verdict, only the error line.

use std::io::Write;

use serde_json::{Map, Value};

use crate::error::CliError;

/// Prints the verdict of `checked` (Ok: the fields that describe what was valid) and
/// passes an error on. `text` is the line printed without `--json` when valid.
pub fn report(
    json: bool,
    checked: Result<Map<String, Value>, CliError>,
    text: impl FnOnce() -> String,
) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match checked {
        Ok(mut fields) if json => {
            fields.insert("valid".into(), Value::Bool(true));
            writeln!(out, "{}", Value::Object(fields)).map_err(CliError::Stdout)
        }
        Ok(_) => writeln!(out, "{}", text()).map_err(CliError::Stdout),
        Err(e @ (CliError::Invalid(_) | CliError::Vdf(_))) => {
            if json {
                let v = serde_json::json!({"valid": false, "reason": e.to_string()});
                writeln!(out, "{v}").map_err(CliError::Stdout)?;
            }
            Err(CliError::Verdict(e.to_string()))
        }
        Err(e) => Err(e),
    }
}
