package proxies

// Capabilities are what a broker can do beyond Broker, one value per
// capability; a nil field is a capability the broker lacks. A caller is
// given them (sessions.Config.Caps, tasks.WorkerConfig.Caps) rather than
// guessing them by type assertions, so a broker wrapped for metrics or a
// test double offers exactly what its Capabilities says.
type Capabilities struct {
	// Exits holds exit IPs for gateways and proxies that probe theirs.
	Exits ExitGate
	// Rotations is the modems' rotation state (BeginRotation … EndRotation).
	Rotations Rotator
	// Clearances marks proxies holding a site's clearance.
	Clearances ClearanceMarker
	// PipelineLeases leases in a caller's pipeline.
	PipelineLeases PipelineLeaser
	// PipelineReleases releases in a caller's transaction.
	PipelineReleases PipelineReleaser
	// Ends says whether a lease ended before its expiry.
	Ends LeaseEnder
	// Lines gives the jobs waiting for a proxy their turns.
	Lines WaitLine
	// Volume keeps a site's volume budget per exit IP for proxies that
	// cannot rotate (volume.go).
	Volume VolumeGate
	// Seats bound the jobs waiting in their slots for a site's proxies.
	Seats WaitSeats
}

// Capabilities of the Redis broker: all but Ends (its leases end only by
// their holder or their TTL).
func (b *RedisBroker) Capabilities() Capabilities {
	return Capabilities{Exits: b, Rotations: b, Clearances: b, PipelineLeases: b, PipelineReleases: b, Lines: b, Volume: b, Seats: b}
}

// Capabilities of the fallback broker are its primary's, so none is lost
// by forwarding: exits, rotations, clearances, wait lines, volume budgets and wait seats are cluster-wide or
// nothing and go to the primary's Redis; leasing and releasing in a
// pipeline and ending a lease depend on the fallback's mode and are its
// own.
func (f *FallbackBroker) Capabilities() Capabilities {
	c := f.primary.Capabilities()
	c.PipelineLeases, c.PipelineReleases, c.Ends = f, f, f
	return c
}
