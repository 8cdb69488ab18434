package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"crawlq/proxies"
	"crawlq/web"
)

// newProxiesCmd is `crawlq proxies`: import, list, stats, remove, unban.
func newProxiesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "proxies", Short: "Manage the cluster-wide proxy pool"}
	cmd.AddCommand(proxiesImportCmd(a), proxiesListCmd(a), proxiesStatsCmd(a), proxiesRemoveCmd(a), proxiesUnbanCmd(a))
	return cmd
}

// withBroker opens --redis, builds the broker and runs f with it.
func withBroker(cmd *cobra.Command, a *app, f func(*proxies.RedisBroker) error) error {
	return withConfiguredBroker(cmd, a, "", f)
}

// withConfiguredBroker is withBroker with the sites and mode of the
// config file at path ("" for the built-in sites).
func withConfiguredBroker(cmd *cobra.Command, a *app, path string, f func(*proxies.RedisBroker) error) error {
	log, err := a.logger()
	if err != nil {
		return err
	}
	cfg, err := brokerConfig(path, log)
	if err != nil {
		return err
	}
	conn, err := a.redis(cmd.Context())
	if err != nil {
		return err
	}
	defer conn.Close()
	return f(proxies.NewRedisBroker(conn.Client, cfg))
}

func proxiesImportCmd(a *app) *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import a proxy list (one a line, any common format, gateways and modems with their options); a bad line, an unknown site or a change to what is already in the pool (without --update) refuses the whole file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := proxies.ParseClass(f.class)
			if err != nil {
				return fmt.Errorf("--class: %w", err)
			}
			ps, err := proxies.ParseFile(args[0])
			if err != nil {
				return fmt.Errorf("import refused, pool unchanged: %w", err)
			}
			return withConfiguredBroker(cmd, a, f.config, func(b *proxies.RedisBroker) error {
				r, err := b.ImportReport(cmd.Context(), ps, proxies.ImportOptions{Class: c, Sites: f.sites, Update: f.update, AllowRotating: f.allowRotating})
				if err != nil {
					return importRefused(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "imported %s as %s from %s: %s\n", r.Entries, c, args[0], importedText(r))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&f.class, "class", "datacenter", "proxy class: datacenter, residential or mobile")
	cmd.Flags().StringSliceVar(&f.sites, "sites", nil, "limit the proxies to these sites of the configuration (comma separated); default every site")
	cmd.Flags().BoolVar(&f.allowRotating, "allow-rotating", false, "import a rotating gateway (a new exit IP per connection) even for sites with a min_interval, which it cannot keep")
	cmd.Flags().BoolVar(&f.update, "update", false, "change the class, sites or options of proxies, modems and gateways already in the pool, adding and removing a gateway's slots (without it such an import is refused, saying what would change)")
	cmd.Flags().StringVar(&f.config, "config", "", "YAML config file whose sites --sites may name (default: the built-in sites)")
	return cmd
}

type importFlags struct {
	class, config string
	sites         []string
	update        bool
	allowRotating bool
}

// importRefused is the one-line error of a refused import.
func importRefused(err error) error {
	if errors.Is(err, proxies.ErrWouldChange) {
		return fmt.Errorf("import refused, pool unchanged: %w; rerun with --update to change them", err)
	}
	var us *proxies.UnknownSiteError
	if errors.As(err, &us) {
		return fmt.Errorf("import refused, pool unchanged: --sites: %w", err)
	}
	var re *proxies.RotatingError
	if errors.As(err, &re) {
		return fmt.Errorf("import refused, pool unchanged: %w (--allow-rotating)", err)
	}
	return err
}

// importedText says which of an import's entries were new and which
// changed.
func importedText(r *proxies.ImportResult) string {
	same := r.Entries.Entries() - r.NewEntries - len(r.Changed)
	s := fmt.Sprintf("%d new, %d already in the pool unchanged", r.NewEntries, same)
	if len(r.Changed) > 0 {
		s += fmt.Sprintf(", %d changed (%s)", len(r.Changed), proxies.SummarizeChanges(r.Changed))
	}
	return s
}

// listedProxy is one line of `proxies list --json`: a proxy, a modem or
// a gateway as the list gave it, credentials and change key masked.
type listedProxy struct {
	ID    string   `json:"id"`
	Kind  string   `json:"kind"`
	Proxy string   `json:"proxy"`
	Class string   `json:"class"`
	Sites []string `json:"sites,omitempty"`
	// Options are as a list line writes them (sessions=20 ttl=10m …).
	Options []string `json:"options,omitempty"`
	// Slots are a gateway's slot IDs.
	Slots []string `json:"slots,omitempty"`
}

func proxiesListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the pool's proxies, modems and gateways (one line each, with their options) as the list gave them, credentials and change keys masked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBroker(cmd, a, func(b *proxies.RedisBroker) error {
				es, err := b.ListEntries(cmd.Context())
				if err != nil {
					return err
				}
				out := make([]listedProxy, len(es))
				for i, e := range es {
					p := e.Proxy
					out[i] = listedProxy{ID: e.ID, Kind: e.Kind(), Proxy: p.Masked(), Class: string(p.Class), Sites: p.Sites,
						Options: p.Options(), Slots: e.Slots}
				}
				return printList(cmd.OutOrStdout(), out, asJSON)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printList(w io.Writer, ps []listedProxy, asJSON bool) error {
	if asJSON {
		return writeJSON(w, ps)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tPROXY\tCLASS\tSITES\tOPTIONS")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Kind, p.Proxy, p.Class, orAll(p.Sites), strings.Join(p.Options, " "))
	}
	return tw.Flush()
}

func orAll(sites []string) string {
	if len(sites) == 0 {
		return "*"
	}
	return strings.Join(sites, ",")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func proxiesStatsCmd(a *app) *cobra.Command {
	var asJSON, sitesOnly bool
	var config string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Pool totals per site and class (ready, leased, cooling, quarantined; cleared per site) and every proxy's state and counters per site",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withConfiguredBroker(cmd, a, config, func(b *proxies.RedisBroker) error {
				st, err := b.Stats(cmd.Context())
				if err != nil {
					return err
				}
				if sitesOnly {
					st.Proxies = nil
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), st)
				}
				return printStats(cmd.OutOrStdout(), st)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&sitesOnly, "sites-only", false, "print the totals per site and class only, not every proxy")
	configFlag(cmd, &config)
	return cmd
}

// printStats prints the totals per site and class (CLEARED on the site's
// "*" row only: clearances are per site), then one line per proxy and
// site (a proxy no site serves yet gets one line with site "-").
func printStats(w io.Writer, st *proxies.PoolStats) error {
	if st.Total == 1 {
		fmt.Fprintln(w, "1 proxy in the pool")
	} else {
		fmt.Fprintf(w, "%d proxies in the pool\n", st.Total)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SITE\tCLASS\tREADY\tLEASED\tCOOLING\tQUARANTINED\tCLEARED\tEXHAUSTED")
	for _, s := range sortedSites(st.Sites) {
		x := st.Sites[s]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", s, "*", x.Ready, x.Leased, x.Cooling, x.Quarantined, x.Cleared, classList(x.Exhausted))
		for _, c := range []proxies.Class{proxies.Datacenter, proxies.Residential, proxies.Mobile} {
			if n, ok := x.ByClass[c]; ok {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t\t\n", s, c, n.Ready, n.Leased, n.Cooling, n.Quarantined)
			}
		}
	}
	if len(st.Sites) == 0 {
		fmt.Fprintln(tw, "(no site configured or leased on yet)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := printGateways(w, st); err != nil || len(st.Proxies) == 0 {
		return err
	}
	fmt.Fprintln(w)
	return printProxyStats(w, st.Proxies)
}

// printGateways lists the pool's gateways and each site's exit IPs, and
// what its modems did.
func printGateways(w io.Writer, st *proxies.PoolStats) error {
	if st.Modems != nil {
		fmt.Fprintf(w, "\nModems: %s\n", web.ModemLine(st.Modems))
	}
	if len(st.Gateways) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nGATEWAY\tPROXY\tSESSIONS\tLEASED\tTTL\tIDLE\tEXIT")
	for _, g := range st.Gateways {
		exit := g.Exit
		if g.Rotating {
			exit = "rotating (no sticky sessions)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", g.ID, g.Masked, g.Slots, g.Leased, g.TTL, g.Idle, exit)
	}
	fmt.Fprintln(tw, "\nSITE\tEXIT IPS HELD\tQUARANTINED\tSEEN")
	for _, s := range sortedSites(st.Sites) {
		if x := st.Sites[s].Exits; x != nil {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", s, x.Held, x.Quarantined, x.Seen)
		}
	}
	return tw.Flush()
}

func printProxyStats(w io.Writer, ps []proxies.ProxyStats) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROXY\tCLASS\tSITES\tSITE\tSTATE\tOK\tFAILED\tBANS\tLATENCY\tLAST BAN")
	for _, p := range ps {
		if len(p.Sites) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t-\t-\t0\t0\t0\t-\t\n", p.ID, p.Masked, p.Class, orAll(p.Allowed))
		}
		for _, site := range sortedSites(p.Sites) {
			x := p.Sites[site]
			lat := "-"
			if x.EWMALatency > 0 {
				lat = x.EWMALatency.Round(time.Millisecond).String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", p.ID, p.Masked, p.Class, orAll(p.Allowed),
				site, x.State, x.OK, x.Failed, x.Banned, lat, x.LastBan)
		}
	}
	return tw.Flush()
}

func sortedSites[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func classList(cs []proxies.Class) string {
	if len(cs) == 0 {
		return "-"
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return strings.Join(out, ",")
}

func proxiesRemoveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID...",
		Short: "Remove proxies, modems and gateways (a gateway's ID removes all its slots) from the pool; an ID not in the pool removes nothing and fails",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBroker(cmd, a, func(b *proxies.RedisBroker) error {
				t, err := b.RemoveEntries(cmd.Context(), args...)
				var nip *proxies.NotInPoolError
				if errors.As(err, &nip) {
					return fmt.Errorf("remove refused, pool unchanged: %w", err)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", t)
				return nil
			})
		},
	}
}

func proxiesUnbanCmd(a *app) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "unban [ID...|--all]",
		Short: "End the quarantine of proxies on every site",
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return errors.New("give proxy IDs or --all (not both)")
			}
			return withBroker(cmd, a, func(b *proxies.RedisBroker) error {
				var n int
				var err error
				if all {
					n, err = b.UnbanAll(cmd.Context())
				} else {
					n, err = b.Unban(cmd.Context(), args...)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ended %d quarantines\n", n)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "unban every quarantined proxy")
	return cmd
}

// jsonLine writes v as one line of JSON.
func jsonLine(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }
