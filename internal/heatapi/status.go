package heatapi

import (
	"context"
	"net/url"
)

// StackSummary is one stack as GET /stacks lists it.
type StackSummary struct {
	ID           string `json:"id"`
	Name         string `json:"stack_name"`
	Status       string `json:"stack_status"`
	StatusReason string `json:"stack_status_reason"`
	// Parent is the id of the stack a nested stack belongs to ("" for a
	// top-level stack).
	Parent string `json:"parent"`
}

// StackListOpts filters GET /stacks.
type StackListOpts struct {
	// ShowNested lists nested stacks too.
	ShowNested bool
	// Status keeps the stacks whose status (without the action) is this,
	// e.g. IN_PROGRESS.
	Status string
}

// ListStacks lists the stacks (all of them: Heat pages only when asked to).
func (c *Client) ListStacks(ctx context.Context, o StackListOpts) ([]StackSummary, error) {
	q := url.Values{}
	if o.ShowNested {
		q.Set("show_nested", "True")
	}
	if o.Status != "" {
		q.Set("status", o.Status)
	}
	var body struct {
		Stacks []StackSummary `json:"stacks"`
	}
	if _, err := c.do(ctx, "GET", c.url([]string{"stacks"}, q), nil, &body, 200); err != nil {
		return nil, err
	}
	return body.Stacks, nil
}

// Service is one Heat engine as GET /services lists it.
type Service struct {
	Binary   string `json:"binary"`
	Status   string `json:"status"` // up, down
	EngineID string `json:"engine_id"`
	Host     string `json:"host"`
}

// ListServices lists the engines Heat knows, as an engine answers over RPC:
// an answer means at least one engine consumes RPC.
func (c *Client) ListServices(ctx context.Context) ([]Service, error) {
	var body struct {
		Services []Service `json:"services"`
	}
	if _, err := c.do(ctx, "GET", c.url([]string{"services"}, nil), nil, &body, 200); err != nil {
		return nil, err
	}
	return body.Services, nil
}
