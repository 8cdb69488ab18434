package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"crawlq/results/pgsink"
	"crawlq/tasks/site"
)

func newPricesCmd() *cobra.Command {
	var pg string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prices SITE ID --postgres URL [--json]",
		Short: "Print an item's price history from PostgreSQL, oldest first",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			url, err := postgresURL(pg, true)
			if err != nil {
				return err
			}
			conn, err := pgsink.Connect(cmd.Context(), url)
			if err != nil {
				return postgresErr(err)
			}
			defer conn.Close(context.WithoutCancel(cmd.Context()))
			siteName := strings.ToLower(strings.TrimSpace(args[0]))
			ps, err := pgsink.Prices(cmd.Context(), conn, siteName, args[1])
			if err != nil {
				return err
			}
			if len(ps) == 0 {
				if err := knownSite(cmd.Context(), conn, siteName); err != nil {
					return err
				}
			}
			if asJSON {
				return jsonLine(cmd.OutOrStdout(), ps)
			}
			if len(ps) == 0 {
				return fmt.Errorf("no observations of %s %s", siteName, args[1])
			}
			return writePrices(cmd.OutOrStdout(), ps)
		},
	}
	postgresFlag(cmd, &pg, "PostgreSQL URL of the sink's store")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

// knownSite refuses a site that is neither built in nor in the store.
func knownSite(ctx context.Context, conn pgsink.Querier, name string) error {
	stored, err := pgsink.Sites(ctx, conn)
	if err != nil {
		return err
	}
	known := append(site.Default().Names(), stored...)
	if slices.Contains(known, name) {
		return nil
	}
	slices.Sort(known)
	return fmt.Errorf("unknown site %q (known: %s)", name, strings.Join(slices.Compact(known), ", "))
}

func writePrices(w io.Writer, ps []pgsink.PricePoint) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tPRICE\tOLD PRICE\tIN STOCK\tSELLER\tSCHEDULE\tTASK")
	for _, p := range ps {
		stock := "-"
		if p.InStock != nil {
			stock = fmt.Sprint(*p.InStock)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.At.Format(time.RFC3339), rub(p.Price), optionalRub(p.OldPrice), stock,
			dashStr(p.Seller), dashStr(p.Schedule), p.Task)
	}
	return tw.Flush()
}

// optionalRub is rub, or "-" for an unknown (zero) price.
func optionalRub(k int64) string {
	if k == 0 {
		return "-"
	}
	return rub(k)
}

func dashStr(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
