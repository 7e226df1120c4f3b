//! The live view of `wirespeed monitor`: a ratatui table redrawn every interval from a
//! fresh snapshot of the metrics file. The terminal is put back (raw mode off, main
//! screen, cursor shown) by a guard, on every way out: quit, error or panic.

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};
use ratatui::{Frame, Terminal};
use wirespeed_disco::metrics::{Counter, Snapshot};

use super::{
    custom_line, header_line, pipeline_state, rates, read_snapshot, snapshot_table, tile_state,
    us_cell, TileRates,
};
use crate::args::group_digits;
use crate::error::CliError;

/// How long the final frame stays up once the pipeline has ended (a key ends it early).
const FINAL_HOLD: Duration = Duration::from_millis(1500);

/// Raw mode and the alternate screen, undone on drop.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> io::Result<TerminalGuard> {
        enable_raw_mode()?;
        // From here on, dropping the guard undoes whatever was done.
        let guard = TerminalGuard;
        execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
        let _ = disable_raw_mode();
    }
}

/// What one frame shows.
#[derive(Debug)]
pub(super) struct View<'a> {
    pub path: &'a Path,
    pub snap: &'a Snapshot,
    pub rates: &'a [TileRates],
    pub interval: Duration,
    /// Why the last read failed (the frame shows the snapshot before it).
    pub error: Option<String>,
}

/// Runs the live view until q/Esc or until the pipeline has ended.
pub(super) fn run(path: &Path, first: Snapshot, interval: Duration) -> Result<(), CliError> {
    if !io::stdout().is_terminal() {
        return Err(CliError::Invalid(
            "monitor: standard output is not a terminal (use --once, or --once --json)".into(),
        ));
    }
    let tui = |e: io::Error| CliError::Invalid(format!("monitor: terminal: {e}"));
    let guard = TerminalGuard::enter().map_err(tui)?;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout())).map_err(tui)?;
    let last = watch(&mut terminal, path, first, interval).map_err(tui)?;
    drop(terminal);
    drop(guard);
    if last.state != 0 {
        // Leave the final numbers on the main screen.
        let text = snapshot_table(path, &last);
        io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(CliError::Stdout)?;
    }
    Ok(())
}

/// Whether a key asks to quit: q, Esc or Ctrl-C (raw mode turns it into a key).
fn quits(ev: &Event) -> bool {
    match ev {
        Event::Key(k) if k.kind == KeyEventKind::Press => {
            matches!(k.code, KeyCode::Char('q') | KeyCode::Esc)
                || (k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL))
        }
        _ => false,
    }
}

/// The redraw loop; returns the last snapshot.
fn watch<B: Backend<Error = io::Error>>(
    terminal: &mut Terminal<B>,
    path: &Path,
    first: Snapshot,
    interval: Duration,
) -> io::Result<Snapshot> {
    let mut snap = first;
    let mut taken = Instant::now();
    let mut tile_rates = rates(None, &snap, 0.0);
    let mut error = None;
    let mut next = taken + interval;
    loop {
        let view = View {
            path,
            snap: &snap,
            rates: &tile_rates,
            interval,
            error: error.clone(),
        };
        terminal.draw(|f| draw(f, &view))?;
        if snap.state != 0 {
            // Ended: hold the final frame a moment, then leave.
            let until = Instant::now() + FINAL_HOLD;
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                if event::poll(left)? && quits(&event::read()?) {
                    break;
                }
            }
            return Ok(snap);
        }
        // Wait for the next tick, handling keys (and redrawing on resize).
        loop {
            let left = next.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            if event::poll(left)? {
                let ev = event::read()?;
                if quits(&ev) {
                    return Ok(snap);
                }
                if matches!(ev, Event::Resize(..)) {
                    break;
                }
            }
        }
        let now = Instant::now();
        if now < next {
            continue; // a resize: redraw what we have
        }
        next = now + interval;
        match read_snapshot(path) {
            Ok(s) => {
                tile_rates = rates(Some(&snap), &s, now.duration_since(taken).as_secs_f64());
                snap = s;
                taken = now;
                error = None;
            }
            Err(e) => error = Some(e.to_string()),
        }
    }
}

/// One frame of the live view drawn off screen, as plain text lines (trailing blanks
/// trimmed): for showing the view where there is no terminal to take over, such as the
/// demo's output.
pub fn frame_text(
    path: &Path,
    snap: &Snapshot,
    rates: &[TileRates],
    interval: Duration,
    width: u16,
) -> String {
    let height = (snap.tiles.len() as u16).saturating_add(15);
    let view = View {
        path,
        snap,
        rates,
        interval,
        error: None,
    };
    // Drawing off screen cannot fail (the test backend's error type is uninhabited).
    let Ok(mut term) = Terminal::new(ratatui::backend::TestBackend::new(width, height));
    let Ok(_) = term.draw(|f| draw(f, &view));
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn rate_cell(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| group_digits(v.round() as u64))
}

fn pct_cell(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// Draws one frame: header, tile table, custom counters.
pub(super) fn draw(f: &mut Frame<'_>, v: &View<'_>) {
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Min(4),
        Constraint::Length(8),
    ])
    .areas(f.area());

    let state_style = match v.snap.state {
        0 => Style::default().fg(Color::Green),
        1 => Style::default().fg(Color::Cyan),
        _ => Style::default().fg(Color::Red),
    };
    let mut header = vec![
        Line::from(header_line(v.snap)).style(state_style),
        Line::from(format!(
            "metrics {}  every {} ms  q or Esc quits",
            v.path.display(),
            v.interval.as_millis()
        )),
    ];
    if let Some(e) = &v.error {
        header[1] =
            Line::from(format!("last read failed: {e}")).style(Style::default().fg(Color::Red));
    }
    let title = format!(
        " wirespeed monitor: pipeline {} ",
        pipeline_state(v.snap.state)
    );
    f.render_widget(
        Paragraph::new(header).block(Block::bordered().title(title)),
        top,
    );

    let head = [
        "tile", "state", "in/s", "out/s", "busy %", "bp %", "shed", "rejected", "overrun",
        "p50 us", "p99 us",
    ];
    // Text columns left, numbers right.
    let cell = |i: usize, s: String| {
        let line = Line::from(s);
        Cell::from(if i < 2 { line } else { line.right_aligned() })
    };
    let row = |cells: Vec<String>| Row::new(cells.into_iter().enumerate().map(|(i, s)| cell(i, s)));
    let rows = v.snap.tiles.iter().zip(v.rates).map(|(t, r)| {
        row(vec![
            t.name.clone(),
            tile_state(t).to_string(),
            rate_cell(r.in_per_s),
            rate_cell(r.out_per_s),
            pct_cell(r.busy_pct),
            pct_cell(r.backpressure_pct),
            group_digits(t.get(Counter::Shed)),
            group_digits(t.get(Counter::Rejected)),
            group_digits(t.get(Counter::Overrun)),
            us_cell(r.p50_us),
            us_cell(r.p99_us),
        ])
    });
    let widths = [
        Constraint::Length(10),
        Constraint::Length(9),
        Constraint::Length(11),
        Constraint::Length(11),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
    ];
    let table = Table::new(rows, widths)
        .header(
            row(head.iter().map(|h| h.to_string()).collect())
                .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .column_spacing(2)
        .block(Block::bordered().title(" tiles (p50/p99: upper edges of histogram buckets) "));
    f.render_widget(table, middle);

    let custom: Vec<Line<'_>> = v
        .snap
        .tiles
        .iter()
        .filter_map(|t| custom_line(t).map(|l| format!("{}: {l}", t.name).into()))
        .collect();
    f.render_widget(
        Paragraph::new(custom).block(Block::bordered().title(" counters ")),
        bottom,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use wirespeed_disco::metrics::TileSnapshot;

    #[test]
    fn a_frame_shows_every_tile_and_the_state() {
        let mut t = TileSnapshot {
            name: "dedup".into(),
            custom: vec![("duplicate".into(), 12)],
            ..TileSnapshot::default()
        };
        t.counters[Counter::Shed as usize] = 3;
        let snap = Snapshot {
            pid: 42,
            state: 1,
            tiles: vec![
                TileSnapshot {
                    name: "source".into(),
                    custom: vec![("udp_kernel_drops".into(), 1234)],
                    ..TileSnapshot::default()
                },
                t,
            ],
            ..Snapshot::default()
        };
        let r = rates(None, &snap, 0.0);
        let view = View {
            path: Path::new("/tmp/m"),
            snap: &snap,
            rates: &r,
            interval: Duration::from_millis(500),
            error: None,
        };
        let mut term = Terminal::new(TestBackend::new(120, 20)).expect("test terminal");
        term.draw(|f| draw(f, &view)).expect("draw");
        let text: String = term
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        for needle in [
            "pid 42",
            "finished",
            "source",
            "dedup",
            "duplicate=12",
            "source: udp_kernel_drops=1,234",
            "p99 us",
            "upper edges of histogram buckets",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
    }
}
