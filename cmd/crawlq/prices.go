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
	var pg, format string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prices SITE ID|URL --postgres URL [--format table|csv|json]",
		Short: "Print an item's price history from PostgreSQL, oldest first (the item by its ID or its product or listing URL)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				format = "json"
			}
			if !slices.Contains(priceFormats, format) {
				return fmt.Errorf("--format %q: want one of %s", format, strings.Join(priceFormats, ", "))
			}
			siteName := strings.ToLower(strings.TrimSpace(args[0]))
			id, err := itemID(siteName, args[1])
			if err != nil {
				return err
			}
			return runPrices(cmd, pg, siteName, id, format)
		},
	}
	postgresFlag(cmd, &pg, "PostgreSQL URL of the sink's store")
	cmd.Flags().StringVar(&format, "format", "table", "table, csv (the dashboard's download: kopecks, empty cells for unknowns) or json")
	cmd.Flags().BoolVar(&asJSON, "json", false, "same as --format json")
	return cmd
}

// priceFormats are the values of `prices --format`.
var priceFormats = []string{"table", "csv", "json"}

func runPrices(cmd *cobra.Command, pg, siteName, id, format string) error {
	url, err := postgresURL(pg, true)
	if err != nil {
		return err
	}
	conn, err := pgsink.Connect(cmd.Context(), url)
	if err != nil {
		return postgresErr(err)
	}
	defer conn.Close(context.WithoutCancel(cmd.Context()))
	ps, err := pgsink.Prices(cmd.Context(), conn, siteName, id)
	if err != nil {
		return pgsink.SchemaHint(err)
	}
	if len(ps) == 0 {
		if err := knownSite(cmd.Context(), conn, siteName); err != nil {
			return pgsink.SchemaHint(err)
		}
	}
	w := cmd.OutOrStdout()
	switch {
	case len(ps) == 0: // in every format: a script sees what a person sees
		return fmt.Errorf("no observations of %s %s", siteName, id)
	case format == "json":
		return jsonLine(w, ps)
	case format == "csv":
		return pgsink.WritePricesCSV(w, siteName, id, ps)
	}
	return writePrices(w, ps)
}

// itemID is the ID arg names on a built-in site: an ID, or a product or
// listing URL as enqueue takes it; on another site, arg as it is.
func itemID(siteName, arg string) (string, error) {
	s, err := site.Default().Get(siteName)
	if err != nil {
		return arg, nil
	}
	return s.ItemID(arg)
}

// knownSite refuses a site that is neither built in nor in the store.
func knownSite(ctx context.Context, conn pgsink.Querier, name string) error {
	stored, err := pgsink.Sites(ctx, conn)
	if err != nil {
		return err
	}
	return siteIn(name, stored)
}

// siteIn refuses a site that is neither built in nor one of also.
func siteIn(name string, also []string) error {
	known := append(site.Default().Names(), also...)
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
