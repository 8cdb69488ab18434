package samples

import _ "embed"

// OzonIncidentPage is the real Ozon "Похоже, нет соединения" incident
// page of 2026-06 (testdata/ozon/ozon_block_no_connection_2026-06.html;
// provenance in its README): the one sample the testbed serves, so the
// only one a binary carries.
//
//go:embed testdata/ozon/ozon_block_no_connection_2026-06.html
var OzonIncidentPage []byte
