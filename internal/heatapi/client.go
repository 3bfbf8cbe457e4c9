// Package heatapi is a small client of the Heat orchestration REST API (v1)
// built on gophercloud's ServiceClient: stacks (find, get with outputs,
// create, update, patch, delete, previews, template, files), resources
// (nested_depth, with_detail, filters), events (nested_depth, marker, limit,
// sort_dir), outputs and software configs and deployments.
//
// It talks to an ephemeral no-auth Heat (NewNoAuth, NewFromHeatDir), to a
// no-auth Heat behind TLS (NewNoAuthTLS), or to the Heat of a clouds.yaml
// cloud (NewFromCloud: gophercloud's openstack/config/clouds reads it;
// Keystone password, application credential or token authentication, or
// none; its TLS settings). Mutations are always addressed
// as /stacks/{name}/{id}: FindStack resolves a bare name through Heat's 302
// redirect without following it (Go's HTTP client would turn a redirected
// PUT, PATCH or DELETE into a bodyless GET).
package heatapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// RequestTimeout bounds one HTTP request (a create or update of a large
// template is validated synchronously by Heat and can take minutes).
const RequestTimeout = 10 * time.Minute

// Client is a Heat API client.
type Client struct {
	// SC is the underlying gophercloud service client; its Endpoint ends in
	// "/" (http://HOST:PORT/v1/PROJECT/).
	SC *gophercloud.ServiceClient
	// HeatDir is the heat_dir of an ephemeral Heat (NewFromHeatDir), for
	// what error messages say to do ("" for another Heat).
	HeatDir string
	// tlsHint names the CAs an https endpoint's certificate is checked
	// against, for messages ("" when it is not checked).
	tlsHint string
}

// NewNoAuth returns a client of a no-auth Heat at endpoint, such as
// http://127.0.0.1:8006/v1/admin.
func NewNoAuth(endpoint string) (*Client, error) {
	return newNoAuth(endpoint, &tlsConf{hint: systemCAs})
}

// NewNoAuthTLS is NewNoAuth for an https endpoint with the module's TLS
// settings (ca_cert, validate_certs).
func NewNoAuthTLS(endpoint string, o TLSOptions) (*Client, error) {
	tc, err := endpointTLS(o)
	if err != nil {
		return nil, err
	}
	return newNoAuth(endpoint, tc)
}

func newNoAuth(endpoint string, tc *tlsConf) (*Client, error) {
	ep, err := normalizeEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	pc := &gophercloud.ProviderClient{HTTPClient: httpClient(tc.config)}
	pc.UseTokenLock()
	pc.UserAgent.Prepend("ephemeral-heat")
	return &Client{SC: &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: ep, Type: "orchestration"}, tlsHint: tc.hint}, nil
}

func normalizeEndpoint(endpoint string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("Heat endpoint %q is not an http(s) URL like http://127.0.0.1:8006/v1/admin", endpoint)
	}
	if !strings.Contains(u.Path, "/v1/") && !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
		return "", fmt.Errorf("Heat endpoint %q has no /v1/PROJECT path (expected something like http://127.0.0.1:8006/v1/admin)", endpoint)
	}
	if strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
		return "", fmt.Errorf("Heat endpoint %q lacks the project after /v1 (for an ephemeral Heat: /v1/admin)", endpoint)
	}
	return strings.TrimRight(u.String(), "/") + "/", nil
}

// Endpoint returns the endpoint the client talks to, without the trailing "/".
func (c *Client) Endpoint() string { return strings.TrimSuffix(c.SC.Endpoint, "/") }

// StackRef names a stack by name and id: the only form mutations use.
type StackRef struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

func (r StackRef) String() string { return r.Name + "/" + r.ID }

func (r StackRef) path(parts ...string) []string {
	return append([]string{"stacks", url.PathEscape(r.Name), url.PathEscape(r.ID)}, parts...)
}

// RefFromURL extracts the stack name and id from a URL or path ending in
// /stacks/{name}/{id}[/...], as in Heat's Location headers and links.
func RefFromURL(s string) (StackRef, bool) {
	i := strings.LastIndex(s, "/stacks/")
	if i < 0 {
		return StackRef{}, false
	}
	parts := strings.Split(strings.TrimPrefix(s[i:], "/stacks/"), "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return StackRef{}, false
	}
	name, err1 := url.PathUnescape(parts[0])
	id, err2 := url.PathUnescape(strings.SplitN(parts[1], "?", 2)[0])
	if err1 != nil || err2 != nil {
		return StackRef{}, false
	}
	return StackRef{Name: name, ID: id}, true
}

// APIError is an error answer of Heat, with its explanation.
type APIError struct {
	Method     string
	URL        string
	StatusCode int
	// Title, Explanation, Type and Message come from Heat's error JSON
	// ({"code", "title", "explanation", "error": {"type", "message"}}).
	Title       string
	Explanation string
	Type        string
	Message     string
	// Body is the raw answer when it is not Heat's error JSON.
	Body string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Heat answered %d", e.StatusCode)
	if e.Title != "" {
		fmt.Fprintf(&b, " %s", e.Title)
	}
	fmt.Fprintf(&b, " to %s %s", e.Method, e.URL)
	switch {
	case e.Message != "":
		b.WriteString(": ")
		if e.Type != "" {
			b.WriteString(e.Type + ": ")
		}
		b.WriteString(e.Message)
	case e.Explanation != "":
		b.WriteString(": " + e.Explanation)
	case e.Body != "":
		body := e.Body
		if len(body) > 500 {
			body = body[:500] + "..."
		}
		b.WriteString(": " + body)
	}
	return b.String()
}

// explain adds to an error what to do about it: Heat not answering (where
// its logs are, how to start it), or a server error while the file system
// of its heat_dir (its database and logs) is nearly full.
func (c *Client) explain(err error) error {
	var ae *APIError
	switch {
	case errors.As(err, &ae) && ae.StatusCode >= 500 && c.HeatDir != "":
		if free, ferr := fsutil.FreeBytes(c.HeatDir); ferr == nil && free < lowDiskBytes {
			return fmt.Errorf("%w; the file system of heat_dir %s (Heat's database and logs) has only %s free: "+
				"free at least %s there, then run this again", err, c.HeatDir, fsutil.HumanBytes(free), fsutil.HumanBytes(lowDiskBytes))
		}
		return fmt.Errorf("%w; Heat's logs are in %s", err, filepath.Join(c.HeatDir, heatdir.LogDir))
	case isConnRefused(err) && c.HeatDir != "":
		return fmt.Errorf("%w: the Heat of heat_dir %s is not running (it stopped or crashed): its logs are in %s; "+
			"start it with ephemeral.heat.ephemeral_heat_launch (state: started)", err, c.HeatDir, filepath.Join(c.HeatDir, heatdir.LogDir))
	case isConnRefused(err):
		return fmt.Errorf("%w: nothing answers at %s; is Heat running there?", err, c.Endpoint())
	}
	return explainTLS(err, c.tlsHint)
}

// lowDiskBytes is the free space under which a server error of an
// ephemeral Heat is blamed on its full file system.
const lowDiskBytes = 64 << 20

func isConnRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH)
}

// IsNotFound reports whether err is Heat's 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound
}

func toAPIError(method, u string, err error) error {
	var ue gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	ae := &APIError{Method: method, URL: u, StatusCode: ue.Actual}
	var hj struct {
		Title       string `json:"title"`
		Explanation string `json:"explanation"`
		Error       struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(ue.Body, &hj) == nil && (hj.Title != "" || hj.Error.Message != "" || hj.Explanation != "") {
		ae.Title, ae.Explanation, ae.Type, ae.Message = hj.Title, hj.Explanation, hj.Error.Type, hj.Error.Message
	} else {
		ae.Body = strings.TrimSpace(string(ue.Body))
	}
	return ae
}

// do sends one request. body is nil, []byte (sent as is) or a value encoded
// as JSON. The answer is decoded into out (numbers kept as json.Number) when
// out is not nil; an out of type *[]byte gets the answer as it came.
func (c *Client) do(ctx context.Context, method, u string, body any, out any, ok ...int) (*http.Response, error) {
	opts := &gophercloud.RequestOpts{OkCodes: ok, KeepResponseBody: true,
		MoreHeaders: map[string]string{"Accept": "application/json"}}
	switch b := body.(type) {
	case nil:
	case []byte:
		opts.RawBody = bytes.NewReader(b)
		opts.MoreHeaders["Content-Type"] = "application/json"
	default:
		opts.JSONBody = b
	}
	resp, err := c.SC.Request(ctx, method, u, opts)
	if err != nil {
		return resp, c.explain(toAPIError(method, u, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp, fmt.Errorf("%s %s: reading the answer: %w", method, u, err)
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return resp, nil
	}
	if out != nil && resp.StatusCode/100 == 2 && len(bytes.TrimSpace(data)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			return resp, fmt.Errorf("%s %s: answer is not the expected JSON: %w", method, u, err)
		}
	}
	return resp, nil
}

func (c *Client) url(parts []string, q url.Values) string {
	u := c.SC.ServiceURL(parts...)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// GetJSON sends GET to the endpoint's path parts (each escaped) with query q
// and decodes the JSON answer into out (numbers as json.Number; a
// *json.RawMessage keeps the answer as it is, e.g. to keep key order).
func (c *Client) GetJSON(ctx context.Context, parts []string, q url.Values, out any) error {
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = url.PathEscape(p)
	}
	_, err := c.do(ctx, "GET", c.url(esc, q), nil, out, 200)
	return err
}

// FindStack resolves a stack name (or id) to its name and id, reading the
// Location of Heat's 302 without following it. A missing (or deleted) stack
// is an *APIError for which IsNotFound is true.
func (c *Client) FindStack(ctx context.Context, nameOrID string) (StackRef, error) {
	if nameOrID == "" || strings.ContainsAny(nameOrID, "/?#") {
		return StackRef{}, fmt.Errorf("invalid stack name %q", nameOrID)
	}
	u := c.url([]string{"stacks", url.PathEscape(nameOrID)}, nil)
	var body struct {
		Stack struct {
			ID   string `json:"id"`
			Name string `json:"stack_name"`
		} `json:"stack"`
	}
	resp, err := c.do(ctx, "GET", u, nil, &body, 200, 301, 302, 303, 307, 308)
	if err != nil {
		return StackRef{}, err
	}
	if resp.StatusCode == 200 {
		// A proxy that followed the redirect itself: the stack is in the body.
		if body.Stack.ID == "" {
			return StackRef{}, fmt.Errorf("GET %s: the answer names no stack id", u)
		}
		return StackRef{Name: body.Stack.Name, ID: body.Stack.ID}, nil
	}
	loc := resp.Header.Get("Location")
	ref, ok := RefFromURL(loc)
	if !ok {
		return StackRef{}, fmt.Errorf("GET %s: Heat redirected to %q, which is not /stacks/{name}/{id}", u, loc)
	}
	return ref, nil
}

// Stack is a stack as GET /stacks/{name}/{id} returns it.
type Stack struct {
	ID              string            `json:"id"`
	Name            string            `json:"stack_name"`
	Status          string            `json:"stack_status"`
	StatusReason    string            `json:"stack_status_reason"`
	CreationTime    string            `json:"creation_time"`
	UpdatedTime     string            `json:"updated_time"`
	DeletionTime    string            `json:"deletion_time"`
	Description     string            `json:"description"`
	Parameters      map[string]string `json:"parameters"`
	Outputs         []Output          `json:"outputs"`
	Tags            []string          `json:"tags"`
	TimeoutMins     *int              `json:"timeout_mins"`
	DisableRollback bool              `json:"disable_rollback"`
	Parent          string            `json:"parent"`
	Links           []Link            `json:"links"`
}

// Ref returns the stack's name and id.
func (s *Stack) Ref() StackRef { return StackRef{Name: s.Name, ID: s.ID} }

// Output is one stack output. Error is set when Heat could not resolve it.
type Output struct {
	Key         string `json:"output_key"`
	Value       any    `json:"output_value"`
	Description string `json:"description"`
	Error       string `json:"output_error,omitempty"`
}

// Link is a link of a Heat object.
type Link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
}

// OutputMap returns the outputs as key -> value, and the errors of those that
// failed to resolve as key -> error.
func (s *Stack) OutputMap() (values map[string]any, errs map[string]string) {
	values, errs = map[string]any{}, map[string]string{}
	for _, o := range s.Outputs {
		if o.Error != "" {
			errs[o.Key] = o.Error
			continue
		}
		values[o.Key] = o.Value
	}
	return values, errs
}

// GetStack returns a stack; with resolveOutputs its outputs are resolved
// (which can be slow for a large stack).
func (c *Client) GetStack(ctx context.Context, ref StackRef, resolveOutputs bool) (*Stack, error) {
	var q url.Values
	if !resolveOutputs {
		q = url.Values{"resolve_outputs": {"false"}}
	}
	var body struct {
		Stack Stack `json:"stack"`
	}
	if _, err := c.do(ctx, "GET", c.url(ref.path(), q), nil, &body, 200); err != nil {
		return nil, err
	}
	return &body.Stack, nil
}

// GetOutput returns one output of a stack.
func (c *Client) GetOutput(ctx context.Context, ref StackRef, key string) (*Output, error) {
	var body struct {
		Output Output `json:"output"`
	}
	if _, err := c.do(ctx, "GET", c.url(ref.path("outputs", url.PathEscape(key)), nil), nil, &body, 200); err != nil {
		return nil, err
	}
	return &body.Output, nil
}

// CreateStack sends POST /stacks with a body from templates.Bundle.RequestBody
// (with stack_name) and returns the new stack's name and id.
func (c *Client) CreateStack(ctx context.Context, name string, body []byte) (StackRef, error) {
	var out struct {
		Stack struct {
			ID    string `json:"id"`
			Links []Link `json:"links"`
		} `json:"stack"`
	}
	if _, err := c.do(ctx, "POST", c.url([]string{"stacks"}, nil), body, &out, 201); err != nil {
		return StackRef{}, err
	}
	if out.Stack.ID == "" {
		return StackRef{}, fmt.Errorf("POST /stacks: Heat's answer names no stack id")
	}
	return StackRef{Name: name, ID: out.Stack.ID}, nil
}

// UpdateStack sends PUT /stacks/{name}/{id} (replace template and
// environment) or, with patch, PATCH (keep what the body does not give).
func (c *Client) UpdateStack(ctx context.Context, ref StackRef, body []byte, patch bool) error {
	method := "PUT"
	if patch {
		method = "PATCH"
	}
	_, err := c.do(ctx, method, c.url(ref.path(), nil), body, nil, 202)
	return err
}

// DeleteStack deletes a stack (DELETE /stacks/{name}/{id}); Heat deletes it
// asynchronously.
func (c *Client) DeleteStack(ctx context.Context, ref StackRef) error {
	_, err := c.do(ctx, "DELETE", c.url(ref.path(), nil), nil, nil, 204)
	return err
}

// GetTemplate returns the stack's stored template.
func (c *Client) GetTemplate(ctx context.Context, ref StackRef) (map[string]any, error) {
	var t map[string]any
	_, err := c.do(ctx, "GET", c.url(ref.path("template"), nil), nil, &t, 200)
	return t, err
}

// GetFiles returns the files stored with the stack (URL -> content).
func (c *Client) GetFiles(ctx context.Context, ref StackRef) (map[string]string, error) {
	f := map[string]string{}
	_, err := c.do(ctx, "GET", c.url(ref.path("files"), nil), nil, &f, 200)
	return f, err
}

// GetEnvironment returns the stack's stored (server-merged) environment.
func (c *Client) GetEnvironment(ctx context.Context, ref StackRef) (map[string]any, error) {
	var e map[string]any
	_, err := c.do(ctx, "GET", c.url(ref.path("environment"), nil), nil, &e, 200)
	return e, err
}

// PreviewResource is a resource in a preview answer.
type PreviewResource struct {
	Name           string `json:"resource_name"`
	Type           string `json:"resource_type"`
	StackName      string `json:"stack_name"`
	ParentResource string `json:"parent_resource,omitempty"`
	PhysicalID     string `json:"physical_resource_id,omitempty"`
}

// UpdatePreview is the answer of PUT|PATCH /stacks/{name}/{id}/preview.
type UpdatePreview struct {
	Added     []PreviewResource `json:"added"`
	Deleted   []PreviewResource `json:"deleted"`
	Replaced  []PreviewResource `json:"replaced"`
	Updated   []PreviewResource `json:"updated"`
	Unchanged []PreviewResource `json:"unchanged"`
}

// PreviewUpdate asks Heat what an update with body would do. With
// showNested the resources of nested stacks are listed too (Heat lists a
// nested-stack resource itself as updated whether or not anything in it
// changes).
func (c *Client) PreviewUpdate(ctx context.Context, ref StackRef, body []byte, patch, showNested bool) (*UpdatePreview, error) {
	method := "PUT"
	if patch {
		method = "PATCH"
	}
	var q url.Values
	if showNested {
		q = url.Values{"show_nested": {"true"}}
	}
	u := c.url(ref.path("preview"), q)
	var data []byte
	if _, err := c.do(ctx, method, u, body, &data, 200); err != nil {
		return nil, err
	}
	p, err := decodeUpdatePreview(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	return p, nil
}

// StackPreview is the answer of POST /stacks/preview: the stack as it would
// be created (Parameters as Heat resolves them) and its resources, those of
// nested stacks included (flattened).
type StackPreview struct {
	Stack     Stack
	Resources []PreviewResource
}

// PreviewCreate asks Heat what creating a stack with body (which names a
// stack_name that must not exist) would do; nothing is created.
func (c *Client) PreviewCreate(ctx context.Context, body []byte) (*StackPreview, error) {
	u := c.url([]string{"stacks", "preview"}, nil)
	var data []byte
	if _, err := c.do(ctx, "POST", u, body, &data, 200); err != nil {
		return nil, err
	}
	p, err := decodeStackPreview(data)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", u, err)
	}
	return p, nil
}

// Resource is a resource as the resource list returns it.
type Resource struct {
	Name           string         `json:"resource_name"`
	LogicalID      string         `json:"logical_resource_id"`
	PhysicalID     string         `json:"physical_resource_id"`
	Type           string         `json:"resource_type"`
	Status         string         `json:"resource_status"`
	StatusReason   string         `json:"resource_status_reason"`
	CreationTime   string         `json:"creation_time"`
	UpdatedTime    string         `json:"updated_time"`
	RequiredBy     []string       `json:"required_by"`
	ParentResource string         `json:"parent_resource,omitempty"`
	Links          []Link         `json:"links"`
	Description    string         `json:"description,omitempty"`
	Attributes     map[string]any `json:"attributes,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// Stack returns the name and id of the stack the resource belongs to (a
// nested stack for resources listed with nested_depth).
func (r *Resource) Stack() (StackRef, bool) { return linkRef(r.Links, "stack") }

// NestedStack returns the nested stack of a stack resource (a provider
// template, ResourceGroup, ...).
func (r *Resource) NestedStack() (StackRef, bool) { return linkRef(r.Links, "nested") }

func linkRef(links []Link, rel string) (StackRef, bool) {
	for _, l := range links {
		if l.Rel == rel {
			return RefFromURL(l.Href)
		}
	}
	return StackRef{}, false
}

// ResourceListOpts filters GET /stacks/{name}/{id}/resources.
type ResourceListOpts struct {
	// NestedDepth > 0 also lists the resources of nested stacks that deep.
	NestedDepth int
	// WithDetail adds attributes, description and metadata.
	WithDetail bool
	// Name, Type and Status filter (any of the values matches).
	Name   []string
	Type   []string
	Status []string
}

// ListResources lists a stack's resources.
func (c *Client) ListResources(ctx context.Context, ref StackRef, o ResourceListOpts) ([]Resource, error) {
	q := url.Values{}
	if o.NestedDepth > 0 {
		q.Set("nested_depth", strconv.Itoa(o.NestedDepth))
	}
	if o.WithDetail {
		q.Set("with_detail", "true")
	}
	for _, v := range o.Name {
		q.Add("name", v)
	}
	for _, v := range o.Type {
		q.Add("type", v)
	}
	for _, v := range o.Status {
		q.Add("status", v)
	}
	var body struct {
		Resources []Resource `json:"resources"`
	}
	if _, err := c.do(ctx, "GET", c.url(ref.path("resources"), q), nil, &body, 200); err != nil {
		return nil, err
	}
	return body.Resources, nil
}

// GetResource returns one resource with its attributes.
func (c *Client) GetResource(ctx context.Context, ref StackRef, name string) (*Resource, error) {
	var body struct {
		Resource Resource `json:"resource"`
	}
	if _, err := c.do(ctx, "GET", c.url(ref.path("resources", url.PathEscape(name)), nil), nil, &body, 200); err != nil {
		return nil, err
	}
	return &body.Resource, nil
}

// GetResourceAttrs returns one resource with the given attributes resolved
// (GET .../resources/{name}?with_attr=A&with_attr=B): e.g. a ResourceGroup's
// refs_map, removed_rsrc_list or a list attribute of its members.
func (c *Client) GetResourceAttrs(ctx context.Context, ref StackRef, name string, attrs ...string) (*Resource, error) {
	q := url.Values{}
	for _, a := range attrs {
		q.Add("with_attr", a)
	}
	var body struct {
		Resource Resource `json:"resource"`
	}
	if _, err := c.do(ctx, "GET", c.url(ref.path("resources", url.PathEscape(name)), q), nil, &body, 200); err != nil {
		return nil, err
	}
	return &body.Resource, nil
}

// Event is a stack event.
type Event struct {
	ID           string `json:"id"`
	ResourceName string `json:"resource_name"`
	LogicalID    string `json:"logical_resource_id"`
	PhysicalID   string `json:"physical_resource_id"`
	Status       string `json:"resource_status"`
	StatusReason string `json:"resource_status_reason"`
	Time         string `json:"event_time"`
	Links        []Link `json:"links"`
}

// Stack returns the (possibly nested) stack the event belongs to.
func (e *Event) Stack() (StackRef, bool) { return linkRef(e.Links, "stack") }

// EventListOpts pages GET /stacks/{name}/{id}/events.
type EventListOpts struct {
	NestedDepth int
	// Marker: list the events after this event id.
	Marker string
	Limit  int
	// SortDir is asc or desc (by time).
	SortDir string
}

// ListEvents lists a stack's events (and those of nested stacks down to
// NestedDepth).
func (c *Client) ListEvents(ctx context.Context, ref StackRef, o EventListOpts) ([]Event, error) {
	q := url.Values{}
	if o.NestedDepth > 0 {
		q.Set("nested_depth", strconv.Itoa(o.NestedDepth))
	}
	if o.Marker != "" {
		q.Set("marker", o.Marker)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.SortDir != "" {
		q.Set("sort_dir", o.SortDir)
	}
	var body struct {
		Events []Event `json:"events"`
	}
	if _, err := c.do(ctx, "GET", c.url(ref.path("events"), q), nil, &body, 200); err != nil {
		return nil, err
	}
	return body.Events, nil
}

// SoftwareConfig is GET /software_configs/{id}.
type SoftwareConfig struct {
	ID           string           `json:"id"`
	Name         string           `json:"name"`
	Group        string           `json:"group"`
	Config       any              `json:"config"`
	Inputs       []map[string]any `json:"inputs"`
	Outputs      []map[string]any `json:"outputs"`
	Options      map[string]any   `json:"options"`
	CreationTime string           `json:"creation_time"`
}

// GetSoftwareConfig returns a software config.
func (c *Client) GetSoftwareConfig(ctx context.Context, id string) (*SoftwareConfig, error) {
	var body struct {
		Config SoftwareConfig `json:"software_config"`
	}
	if _, err := c.do(ctx, "GET", c.url([]string{"software_configs", url.PathEscape(id)}, nil), nil, &body, 200); err != nil {
		return nil, err
	}
	return &body.Config, nil
}

// SoftwareDeployment is GET /software_deployments/{id}.
type SoftwareDeployment struct {
	ID           string         `json:"id"`
	ConfigID     string         `json:"config_id"`
	ServerID     string         `json:"server_id"`
	InputValues  map[string]any `json:"input_values"`
	OutputValues map[string]any `json:"output_values"`
	Action       string         `json:"action"`
	Status       string         `json:"status"`
	StatusReason string         `json:"status_reason"`
	CreationTime string         `json:"creation_time"`
	UpdatedTime  string         `json:"updated_time"`
}

// GetSoftwareDeployment returns a software deployment.
func (c *Client) GetSoftwareDeployment(ctx context.Context, id string) (*SoftwareDeployment, error) {
	var body struct {
		Deployment SoftwareDeployment `json:"software_deployment"`
	}
	if _, err := c.do(ctx, "GET", c.url([]string{"software_deployments", url.PathEscape(id)}, nil), nil, &body, 200); err != nil {
		return nil, err
	}
	return &body.Deployment, nil
}

// ListSoftwareDeployments lists software deployments, of one server when
// serverID is not empty.
func (c *Client) ListSoftwareDeployments(ctx context.Context, serverID string) ([]SoftwareDeployment, error) {
	var q url.Values
	if serverID != "" {
		q = url.Values{"server_id": {serverID}}
	}
	var body struct {
		Deployments []SoftwareDeployment `json:"software_deployments"`
	}
	if _, err := c.do(ctx, "GET", c.url([]string{"software_deployments"}, q), nil, &body, 200); err != nil {
		return nil, err
	}
	return body.Deployments, nil
}
