package proxies

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// importPlan is what one attempt of an import writes and reports.
type importPlan struct {
	// writes are importScript's write quadruples: per proxy its id,
	// spec, class and the spec read ("" for none).
	writes []any
	// drops are its drop pairs: per gateway slot to remove its id and the
	// spec read.
	drops  []any
	result ImportResult
}

// planImport reads the pool's specs of ready's proxies, and of the slots
// beyond a gateway's new sessions, and plans the write; a change without
// update is a *ChangeError.
func (b *RedisBroker) planImport(ctx context.Context, ready []Proxy, update bool) (*importPlan, error) {
	old, err := b.readSpecs(ctx, idsOf(ready))
	if err != nil {
		return nil, err
	}
	entries := Entries(ready)
	extra, err := b.extraSlots(ctx, entries, old)
	if err != nil {
		return nil, err
	}
	plan := &importPlan{result: ImportResult{Imported: len(ready), Entries: tallyOf(entries)}}
	byID := make(map[string]Proxy, len(ready))
	for _, p := range ready {
		byID[p.ID] = p
	}
	for _, e := range entries {
		if err := plan.addEntry(b, e, byID, old, extra[e.ID]); err != nil {
			return nil, err
		}
	}
	if len(plan.result.Changed) > 0 && !update {
		return nil, &ChangeError{Changes: plan.result.Changed}
	}
	return plan, nil
}

func idsOf(ps []Proxy) []string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

// readSpecs reads the pool's specs of ids: id -> spec, absent for a proxy
// not in the pool.
func (b *RedisBroker) readSpecs(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	vals, err := b.rdb.HMGet(ctx, b.k.proxies(), ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("import: read pool: %w", err)
	}
	for i, v := range vals {
		if s, ok := v.(string); ok {
			out[ids[i]] = s
		}
	}
	return out, nil
}

// extraSlots reads, per gateway of entries, the slots of the pool beyond
// its new sessions (id -> spec): those its sessions in the pool (the most
// any of its slots there says) had in addition.
func (b *RedisBroker) extraSlots(ctx context.Context, entries []Entry, old map[string]string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, e := range entries {
		had := 0
		for _, id := range e.Slots {
			if spec, ok := old[id]; ok {
				p, err := b.specs.get(id, spec)
				if err != nil {
					return nil, fmt.Errorf("proxy %s: %w", id, err)
				}
				if p.Gateway != nil {
					had = max(had, p.Gateway.Sessions)
				}
			}
		}
		var ids []string
		for slot := len(e.Slots) + 1; slot <= had; slot++ {
			ids = append(ids, e.ID+"-"+strconv.Itoa(slot))
		}
		specs, err := b.readSpecs(ctx, ids)
		if err != nil {
			return nil, err
		}
		if len(specs) > 0 {
			out[e.ID] = specs
		}
	}
	return out, nil
}

// addEntry plans entry e, whose proxies are in byID: its writes, the
// drops of its extra slots (id -> spec read), and its report.
func (plan *importPlan) addEntry(b *RedisBroker, e Entry, byID map[string]Proxy, old, extra map[string]string) error {
	ids := e.Slots
	if ids == nil {
		ids = []string{e.ID}
	}
	var was *Proxy
	differs, added := false, 0
	for _, id := range ids {
		p := byID[id]
		spec, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("import %s: %w", p.Masked(), err)
		}
		prev, ok := old[id]
		plan.writes = append(plan.writes, id, string(spec), string(p.Class), prev)
		if !ok {
			added++
			continue
		}
		if prev != string(spec) && !differs || was == nil {
			q, err := b.specs.get(id, prev)
			if err != nil {
				return fmt.Errorf("proxy %s: %w", id, err)
			}
			was = &q
		}
		differs = differs || prev != string(spec)
	}
	plan.report(e, was, differs, added, extra)
	return nil
}

// report plans the drops of e's extra slots (id -> spec read) and adds
// e to the result: was is one of its proxies in the pool (nil for none),
// differs says one of its specs changed, added counts its new proxies.
func (plan *importPlan) report(e Entry, was *Proxy, differs bool, added int, extra map[string]string) {
	for id, spec := range extra {
		plan.drops = append(plan.drops, id, spec)
	}
	plan.result.New += added
	plan.result.Removed += len(extra)
	switch {
	case was == nil && len(extra) == 0:
		plan.result.NewEntries++
	case differs || added > 0 || len(extra) > 0:
		plan.result.Changed = append(plan.result.Changed, entryChange(e, was, added, len(extra)))
	}
}

// entryChange is the change of e from was (one of its proxies in the
// pool, nil if only extra slots are), adding and removing slots.
func entryChange(e Entry, was *Proxy, added, removed int) Change {
	p := e.Proxy
	c := Change{ID: e.ID, Kind: e.Kind(), Proxy: p.Masked(), At: p.At, To: placementOf(p), From: placementOf(p),
		Added: added, Removed: removed}
	if was != nil {
		c.From = placementOf(*was)
		c.Options = optionChanges(*was, p)
	}
	for i, o := range c.Options {
		if strings.HasPrefix(o, "sessions ") && (added > 0 || removed > 0) {
			c.Options[i] += " (" + slotsText(added, removed) + ")"
		}
	}
	return c
}

// slotsText is "3 slots added", "1 slot removed" or both.
func slotsText(added, removed int) string {
	var parts []string
	if added > 0 {
		parts = append(parts, plural(added, "slot", "slots")+" added")
	}
	if removed > 0 {
		parts = append(parts, plural(removed, "slot", "slots")+" removed")
	}
	return strings.Join(parts, ", ")
}

// writeImport runs importScript with plan; false when a proxy's spec
// changed since it was read (nothing written: plan again).
func (b *RedisBroker) writeImport(ctx context.Context, plan *importPlan) (bool, error) {
	args := append([]any{len(plan.writes) / 4}, plan.writes...)
	res, err := importScript.Run(ctx, b.rdb, b.k.dropKeys(), append(args, plan.drops...)...).Int64()
	return err == nil && res != importChanged, err
}

// importChanged is importScript's answer when a proxy's spec is not the
// one read.
const importChanged = -2
