// Package statusline writes a live status line for the CLI: redrawn in place
// on a terminal, and on anything else (a pipe, a log file, CI) printed as a
// plain line at most once per interval, so a long wait leaves a readable
// log instead of hundreds of carriage-return frames.
package statusline
