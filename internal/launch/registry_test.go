package launch

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

// The built-in backends declare themselves consistently, and what the
// module and the launcher derive from the declarations follows them.
func TestRegistry(t *testing.T) {
	if err := backend.Check(builtin); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(HeatTypes(), ","); got != "container,native,pod" {
		t.Errorf("heat types %s", got)
	}
	params := map[string]module.Param{}
	for _, p := range BackendParams() {
		if _, dup := params[p.Name]; dup {
			t.Errorf("option %s listed twice", p.Name)
		}
		params[p.Name] = p
	}
	if params["image"].Default != "localhost/ephemeral-heat:latest" || params["heat_all_command"].Default != "heat-all" {
		t.Errorf("declared defaults: %+v", params)
	}
	for _, tc := range []struct {
		heatType string
		given    backend.Values
		want     backend.Values
		err      string
	}{
		{heatType: Native, want: backend.Values{"heat_all_command": "heat-all", "schema_cache": true}},
		{heatType: Container, given: backend.Values{"podman_socket": "unix:///s", "image": ""},
			want: backend.Values{"image": "localhost/ephemeral-heat:latest", "podman_socket": "unix:///s"}},
		{heatType: Pod, given: backend.Values{"engine_workers": 2, "image": "i"},
			want: backend.Values{"image": "i", "engine_workers": 2}},
		{heatType: Native, given: backend.Values{"image": "i", "transport_url": "rabbit://h/"},
			err: "image is only used with heat_type: container or pod; transport_url is only used with heat_type: pod (heat-all runs its RPC in-process)"},
		{heatType: Container, given: backend.Values{"engine_workers": 3}, err: "engine_workers is only used with heat_type: pod"},
		{heatType: Pod, given: backend.Values{"heat_all_command": "x"}, err: "heat_all_command is only used with heat_type: native"},
		{heatType: Pod, given: backend.Values{"no_such": "x"}, err: "no_such is not an option of any heat_type"},
	} {
		d, _ := declaration(tc.heatType)
		got, err := backendValues(d, tc.given, true)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %v: %v, want %q", tc.heatType, tc.given, err, tc.err)
			}
			if lenient, err := backendValues(d, tc.given, false); err != nil || lenient == nil {
				t.Errorf("a stop refused %v: %v", tc.given, err)
			}
		case err != nil || len(got) != len(tc.want):
			t.Errorf("%s %v: %v %v, want %v", tc.heatType, tc.given, got, err, tc.want)
		default:
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s %v: %s is %v, want %v", tc.heatType, tc.given, k, got[k], v)
				}
			}
		}
	}
}

// A backend option that changes how Heat runs restarts it (the
// fingerprint); where to reach podman does not.
func TestFingerprintFollowsDeclarations(t *testing.T) {
	d, _ := declaration(Pod)
	l := &launcher{o: &Options{Database: SQLite}, decl: d}
	fp := func(v backend.Values) string {
		return l.fingerprint(&backend.Spec{HeatType: Pod, BindHost: "127.0.0.1", APIPort: 8006, Options: v})
	}
	base := fp(backend.Values{"image": "i", "engine_workers": 2, "podman_socket": "unix:///a"})
	if fp(backend.Values{"image": "i", "engine_workers": 2, "podman_socket": "unix:///b"}) != base {
		t.Errorf("podman_socket changes the fingerprint")
	}
	if fp(backend.Values{"image": "i", "engine_workers": 3, "podman_socket": "unix:///a"}) == base {
		t.Errorf("engine_workers does not change the fingerprint")
	}
}

func TestRegister(t *testing.T) {
	newFake := func() backend.Backend { return nil }
	for _, tc := range []struct {
		d    backend.Declaration
		want string
	}{
		{backend.Declaration{HeatType: Pod, Identity: "x", New: newFake}, "heat_type pod is declared twice"},
		{backend.Declaration{HeatType: "x", New: newFake}, "no constructor or no identity"},
		{backend.Declaration{HeatType: "x", Identity: "x", New: newFake,
			Options: []*backend.Option{{Param: module.Param{Name: "image", Help: "mine"}}}}, "option image is declared twice"},
	} {
		if _, err := Register(tc.d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc.d, err)
		}
	}
	undo, err := Register(backend.Declaration{HeatType: "x", Identity: heatdir.ProcessIdentity, New: newFake})
	if err != nil || !strings.Contains(strings.Join(HeatTypes(), ","), "x") {
		t.Fatalf("register: %v %v", HeatTypes(), err)
	}
	undo()
	if strings.Contains(strings.Join(HeatTypes(), ","), "x") {
		t.Errorf("still registered after undo: %v", HeatTypes())
	}
}

// Each database is removed by the lifecycle of the backend that made it:
// the pod's own MariaDB by the pod's (its datadir), a sqlite file by
// backend.SQLiteFile, one provisioned on database_url by the launcher's.
func TestDatabaseLifecycleOwner(t *testing.T) {
	for _, tc := range []struct {
		conf, want string
	}{
		{"[database]\nconnection = sqlite:////srv/h/heat.sqlite\n", "backend.SQLiteFile"},
		{"[database]\nconnection = mysql+pymysql://heat:pw@127.0.0.1:3306/heat\n" +
			"host_connection = mysql+pymysql://heat:pw@127.0.0.1:43210/heat\n", "pod.ownMariaDB"},
		{"[database]\nconnection = mysql+pymysql://heat:pw@db.example:3306/heat\n", "launch.provisioned"},
	} {
		d, err := heatdir.At(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(d.File(heatdir.HeatConf), []byte(tc.conf), 0o600); err != nil {
			t.Fatal(err)
		}
		l := &launcher{o: &Options{}, d: d}
		if got := fmt.Sprintf("%T", l.database()); got != tc.want {
			t.Errorf("%q: lifecycle %s, want %s", tc.conf, got, tc.want)
		}
	}
}
