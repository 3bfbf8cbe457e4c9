package heatapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// StackStatus returns a stack's status fields (id, name, status, reason,
// times) from Heat's stack list filtered by id: Heat formats list entries
// from the database row, where GET /stacks/{name}/{id} loads the whole stack
// (its template, environment and resources) even without outputs, which on
// a tripleo-heat-templates overcloud costs heat-all about a tenth of a
// second of CPU per call. Polls use it. Deleted stacks are listed too
// (DELETE_COMPLETE), as GET by id shows them; a stack Heat does not know
// (purged) is an *APIError for which IsNotFound is true.
func (c *Client) StackStatus(ctx context.Context, ref StackRef) (*Stack, error) {
	u := c.url([]string{"stacks"}, url.Values{"id": {ref.ID}, "show_deleted": {"True"}})
	var body struct {
		Stacks []Stack `json:"stacks"`
	}
	if _, err := c.do(ctx, "GET", u, nil, &body, 200); err != nil {
		return nil, err
	}
	for i := range body.Stacks {
		if body.Stacks[i].ID == ref.ID {
			return &body.Stacks[i], nil
		}
	}
	return nil, &APIError{Method: "GET", URL: u, StatusCode: http.StatusNotFound,
		Message: fmt.Sprintf("stack %s is not listed", ref)}
}
