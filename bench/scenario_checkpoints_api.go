package main

// kmirror's REST API as the checkpoints scenario drives it: the connector's config, the groups it
// translated, and their check against the positions committed on the source.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

type ckAPI struct {
	base, connector string
}

type consumerGroupJSON struct {
	Group             string `json:"group"`
	Partitions        int    `json:"partitions"`
	InexactPartitions int    `json:"inexact_partitions"`
	ReadAt            string `json:"read_at"`
}

func (a *ckAPI) put(path string, body any) error {
	js, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPut, a.base+path, bytes.NewReader(js))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("PUT %s: %s: %s", path, resp.Status, rb)
	}
	return nil
}

func (a *ckAPI) get(path string, out any) error {
	resp, err := http.Get(a.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		rb, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, rb)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (a *ckAPI) groups() ([]consumerGroupJSON, error) {
	var body struct {
		Groups []consumerGroupJSON `json:"groups"`
	}
	err := a.get("/connectors/"+a.connector+"/groups", &body)
	return body.Groups, err
}

// waitGroups polls GET /connectors/{c}/groups every 200 ms until it lists n groups, each with every partition
// translated exactly from offsets read after since.
func (a *ckAPI) waitGroups(ctx context.Context, deadline time.Time, n, partitions int, since time.Time) ([]consumerGroupJSON, error) {
	for {
		gs, err := a.groups()
		ok := 0
		for _, g := range gs {
			read, _ := time.Parse("2006-01-02T15:04:05.000Z", g.ReadAt)
			if g.Partitions == partitions && g.InexactPartitions == 0 && read.After(since) {
				ok++
			}
		}
		if err == nil && ok == n && len(gs) == n {
			return gs, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("%d of %d groups translated exactly (the API lists %d)", ok, n, len(gs))
			}
			return nil, err
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// verify reads every group's offsets and counts the partitions that are not exact, not at pos, or not at the
// same offset on B (the remote topic was written from offset 0 by one idempotent producer per partition).
func (a *ckAPI) verify(ctx context.Context, groups []string, pos map[string][]int64) (int, int, error) {
	var mu sync.Mutex
	var wrong, verified int
	var eg errgroup.Group
	eg.SetLimit(4)
	for _, g := range groups {
		if ctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			var body struct {
				Offsets []struct {
					Partition    int32  `json:"partition"`
					SourceOffset int64  `json:"source_offset"`
					TargetOffset *int64 `json:"target_offset"`
					Exact        bool   `json:"exact"`
					Basis        string `json:"basis"`
				} `json:"offsets"`
			}
			err := a.get("/connectors/"+a.connector+"/groups/"+g+"/offsets", &body)
			bad := 0
			for _, o := range body.Offsets {
				if !o.Exact || o.Basis != "offset_map" || o.TargetOffset == nil || int(o.Partition) >= len(pos[g]) ||
					o.SourceOffset != pos[g][o.Partition] || *o.TargetOffset != o.SourceOffset {
					bad++
				}
			}
			bad += max(0, len(pos[g])-len(body.Offsets))
			mu.Lock()
			wrong += bad
			verified++
			mu.Unlock()
			return err
		})
	}
	err := eg.Wait()
	return verified, wrong, err
}
