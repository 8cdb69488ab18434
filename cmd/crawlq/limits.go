package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"crawlq/proxies"
	"crawlq/web"
)

// newLimitsCmd is `crawlq limits`: the learned limits, their log, pin
// and unpin.
func newLimitsCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "The limits crawlq learned (min_interval: auto): each value, its bounds, its last change and why; pin or unpin one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBroker(cmd, a, func(b *proxies.RedisBroker) error {
				ls, err := b.Limits(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSONLine(cmd, ls)
				}
				printLimits(cmd.OutOrStdout(), ls)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array")
	cmd.AddCommand(limitsPinCmd(a), limitsUnpinCmd(a), limitsLogCmd(a))
	return cmd
}

func limitsPinCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "pin NAME VALUE",
		Short: "Set a learned limit to VALUE (a duration such as 800ms for a pace) and keep it there: no learner moves it until unpin",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBroker(cmd, a, func(b *proxies.RedisBroker) error {
				l, err := b.Limit(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				v, err := limitValue(l.Unit, args[1])
				if err != nil {
					return fmt.Errorf("pin %s: %w", args[0], err)
				}
				if err := b.PinLimit(cmd.Context(), args[0], v); err != nil {
					return err
				}
				l, err = b.Limit(cmd.Context(), args[0])
				if err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "%s pinned at %s\n", l.Name, web.LimitText(l.Unit, l.Value))
				}
				return err
			})
		},
	}
}

func limitsUnpinCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "unpin NAME",
		Short: "Let the learner move a pinned limit again, from its value now",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBroker(cmd, a, func(b *proxies.RedisBroker) error {
				if err := b.UnpinLimit(cmd.Context(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s unpinned\n", args[0])
				return nil
			})
		},
	}
}

func limitsLogCmd(a *app) *cobra.Command {
	var n int
	cmd := &cobra.Command{
		Use:   "log NAME",
		Short: "A learned limit's last changes, newest first, with their reasons",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBroker(cmd, a, func(b *proxies.RedisBroker) error {
				l, err := b.Limit(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				cs, err := b.LimitLog(cmd.Context(), args[0], n)
				if err != nil {
					return err
				}
				w := cmd.OutOrStdout()
				for _, c := range cs {
					fmt.Fprintf(w, "%s  %-8s %s\n", c.At.UTC().Format(time.RFC3339), web.LimitText(l.Unit, c.Value), c.Reason)
				}
				return nil
			})
		},
	}
	cmd.Flags().IntVarP(&n, "lines", "n", 20, "changes to print")
	return cmd
}

// printLimits prints one line per limit.
func printLimits(w io.Writer, ls []proxies.Limit) {
	if len(ls) == 0 {
		fmt.Fprintln(w, "no learned limits (a site with min_interval: auto starts one at its first lease)")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LIMIT\tVALUE\tBOUNDS\tPINNED\tCHANGED\tREASON")
	for _, l := range ls {
		pinned := ""
		if l.Pinned {
			pinned = "pinned"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s..%s\t%s\t%s\t%s\n", l.Name, web.LimitText(l.Unit, l.Value), web.LimitText(l.Unit, l.Min),
			web.LimitText(l.Unit, l.Max), pinned, l.Changed.UTC().Format(time.RFC3339), l.Reason)
	}
	tw.Flush()
}

// limitValue reads a value given for a limit of unit: a duration for ms,
// else an integer.
func limitValue(unit, s string) (int64, error) {
	if unit == "ms" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%q is not a positive duration such as 800ms", s)
		}
		return d.Milliseconds(), nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a count such as 600", s)
	}
	return v, nil
}
