// Package yamlstrict decodes a YAML configuration into Go structs
// strictly, with errors a user can act on: the line, the dotted place
// (sites.avito.base_url) and, for a misspelt key, the field it was most
// likely meant to be. No error names a Go type.
package yamlstrict
