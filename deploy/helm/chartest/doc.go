// Package chartest tests the Helm chart in deploy/helm/crawlq: it renders
// the chart for every example values file with Helm's own engine (the Go
// library, pinned in this module's go.mod), decodes every manifest
// strictly into the Kubernetes types (KEDA's objects against KEDA's CRD
// schema) and checks the wiring between them.
//
// It is a module of its own so that crawlq's go.mod carries neither Helm
// nor the Kubernetes libraries: the README's test command runs it after
// the main module's tests (cd deploy/helm/chartest && go test ./...).
package chartest
