package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"crawlq/detect"
	"crawlq/tasks"
	sitepkg "crawlq/tasks/site"
)

// newDetectCmd judges a saved page offline and prints the verdict as JSON.
func newDetectCmd() *cobra.Command {
	var site, kind, finalURL, rulesFile string
	var status int
	var headers []string
	cmd := &cobra.Command{
		Use:   "detect --site S --kind K [--status N] [--url FINAL] [--header 'Name: value']... [--rules FILE] FILE",
		Short: "Judge a saved page (FILE may be .gz) with the ban rules and print the verdict as JSON",
		Long: "Judge a saved page offline with the built-in ban detection rules, merged with --rules FILE if\n" +
			"given, and print the verdict as JSON. An ambiguous page (an empty list where items are expected,\n" +
			"a missing selector on a well-formed page, a size drop) is \"suspect\", with the rule that fired\n" +
			"and \"if_confirmed\": what it is when a second proxy gives the same answer (a worker asks one).\n" +
			"The exit status is 0 for any verdict and non-zero only for bad input.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules := detect.Builtin()
			if rulesFile != "" {
				var err error
				if rules, err = detect.LoadRules(rulesFile); err != nil {
					return err
				}
			}
			resp, err := detect.SavedResponse(args[0], status, finalURL, headers)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			return enc.Encode(detect.New(rules, detect.WithRecognizer(tasks.Recognizer(sitepkg.Default()))).Judge(site, kind, resp))
		},
	}
	cmd.Flags().StringVar(&site, "site", "", "site whose rules apply: wildberries, ozon, avito or a site from --rules (required)")
	cmd.Flags().StringVar(&kind, "kind", "default", "page kind: search, product (or item), default, or a kind from --rules")
	cmd.Flags().IntVar(&status, "status", 200, "HTTP status the page came with")
	cmd.Flags().StringVar(&finalURL, "url", "", "final URL after redirects")
	cmd.Flags().StringArrayVar(&headers, "header", nil, `response header "Name: value" (repeatable), e.g. "Retry-After: 30"`)
	cmd.Flags().StringVar(&rulesFile, "rules", "", "YAML rules file merged over the built-in rules")
	_ = cmd.MarkFlagRequired("site")
	return cmd
}
