package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	_ "crawlq/tasks/avito" // registers avito
	_ "crawlq/tasks/ozon"  // registers ozon
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries" // registers wildberries
)

// newParseCmd is `crawlq parse`: a saved page through its site's parser,
// offline.
func newParseCmd() *cobra.Command {
	var siteName, kind, pageURL string
	cmd := &cobra.Command{
		Use:   "parse --site SITE --kind KIND [--url PAGE_URL] FILE",
		Short: "Parse a saved page offline and print its items as JSON lines",
		Long: "Parse a saved page (HTML or JSON, .gz allowed) with the site's parser and print\n" +
			"one JSON item per line, then the next-page flag and follow targets on stderr.\n" +
			"Sites: " + fmt.Sprint(site.Names()),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runParse(cmd, siteName, kind, pageURL, args[0])
		},
	}
	cmd.Flags().StringVar(&siteName, "site", "", "site name (wildberries, ozon, avito)")
	cmd.Flags().StringVar(&kind, "kind", "", "page kind (search, category, product, item)")
	cmd.Flags().StringVar(&pageURL, "url", "", "URL the page was fetched from (resolves relative links)")
	_ = cmd.MarkFlagRequired("site")
	_ = cmd.MarkFlagRequired("kind")
	return cmd
}

func runParse(cmd *cobra.Command, siteName, kind, pageURL, file string) error {
	s, err := site.Get(siteName)
	if err != nil {
		return fmt.Errorf("--site: %w", err)
	}
	if _, err := s.Kind(kind); err != nil {
		return fmt.Errorf("--kind: %w", err)
	}
	body, err := site.ReadFile(file)
	if err != nil {
		return err
	}
	page, err := s.Parse(kind, body, pageURL, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetEscapeHTML(false)
	for _, it := range page.Items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%d items, next page: %v, follow: %d\n", len(page.Items), page.Next, len(page.Follow))
	return nil
}
