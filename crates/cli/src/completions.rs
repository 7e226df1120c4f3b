//! `wirespeed completions bash|zsh|fish` and `wirespeed man [SUBCOMMAND...]`: shell
//! completions and man pages (roff), one per command, generated from the CLI definition
//! itself (clap_complete,
//! clap_mangen), so they list exactly the commands and flags the binary parses.

use std::io::Write;

use clap::{Args, ValueEnum};

use crate::error::CliError;

/// Shells `wirespeed completions` writes a script for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// bash: `source <(wirespeed completions bash)`
    Bash,
    /// zsh: write to a file named `_wirespeed` on `$fpath`
    Zsh,
    /// fish: write to `~/.config/fish/completions/wirespeed.fish`
    Fish,
}

/// Arguments of `wirespeed completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write completions for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the completion script for `shell` on stdout.
pub fn completions(mut cmd: clap::Command, a: &CompletionsArgs) -> Result<(), CliError> {
    let shell = match a.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "wirespeed", &mut buf);
    std::io::stdout()
        .lock()
        .write_all(&buf)
        .map_err(CliError::Stdout)
}

/// Arguments of `wirespeed man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// A subcommand's page instead of the top one, e.g. `vdf verify` (the page the top
    /// one lists as wirespeed-vdf-verify(1))
    #[arg(value_name = "SUBCOMMAND")]
    pub path: Vec<String>,
}

/// Writes the man page (roff) of the command at `a.path` on stdout.
pub fn man(mut cmd: clap::Command, a: &ManArgs) -> Result<(), CliError> {
    // Built, each subcommand carries its page name (wirespeed-vdf-verify).
    cmd.build();
    for name in &a.path {
        cmd = cmd
            .find_subcommand(name)
            .cloned()
            .ok_or_else(|| CliError::Invalid(format!("man: no subcommand '{name}'")))?;
    }
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .source(format!("wirespeed {}", env!("CARGO_PKG_VERSION")))
        .render(&mut buf)
        .map_err(|e| CliError::Internal(format!("man page: {e}")))?;
    std::io::stdout()
        .lock()
        .write_all(&buf)
        .map_err(CliError::Stdout)
}
