package workdir

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tripleoclientSource is python-tripleoclient stable/wallaby: the directory
// or .tar.gz named by EPHEMERAL_HEAT_TRIPLEOCLIENT, else the tarball in
// ../shared/reference (relative to the repository root).
func tripleoclientSource(t *testing.T) string {
	t.Helper()
	src := os.Getenv("EPHEMERAL_HEAT_TRIPLEOCLIENT")
	if src == "" {
		src = filepath.Join("..", "..", "..", "shared", "reference", "python-tripleoclient-stable-wallaby.tar.gz")
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("python-tripleoclient stable/wallaby is needed to check the working dir's formats: %v. "+
			"Set EPHEMERAL_HEAT_TRIPLEOCLIENT to a checkout or .tar.gz of it "+
			"(git clone -b stable/wallaby https://opendev.org/openstack/python-tripleoclient), "+
			"or put the tarball in ../shared/reference (see its README.md)", err)
	}
	return src
}

// readSource returns the files of src whose paths end with the suffixes
// given (e.g. "tripleoclient/constants.py").
func readSource(t *testing.T, src string, suffixes ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	match := func(name string) string {
		for _, s := range suffixes {
			if strings.HasSuffix(filepath.ToSlash(name), "/"+s) {
				return s
			}
		}
		return ""
	}
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if s := match(p); s != "" {
					b, _ := os.ReadFile(p)
					out[s] = string(b)
				}
			}
			return nil
		})
	} else {
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if s := match(h.Name); s != "" {
				b, _ := io.ReadAll(tr)
				out[s] = string(b)
			}
		}
	}
	for _, s := range suffixes {
		if out[s] == "" {
			t.Fatalf("%s has no %s", src, s)
		}
	}
	return out
}

// The working dir's names and formats, held against python-tripleoclient
// stable/wallaby's own source: constants.py (PASSWORDS_ENV_FORMAT,
// STACK_ENV_FILE_NAME, STACK_OUTPUTS, EXPORT_DATA,
// EXPORT_PASSWORD_EXCLUDE_PATTERNS), utils.py (get_status_yaml,
// update_deployment_status, archive_deploy_artifacts), v1/overcloud_deploy.py
// (_export_stack's file names) and workflows/deployment.py
// (create_overcloudrc's rc name).
func TestFormatsAreTripleoclients(t *testing.T) {
	const (
		constants = "tripleoclient/constants.py"
		utils     = "tripleoclient/utils.py"
		deploy    = "tripleoclient/v1/overcloud_deploy.py"
		workflow  = "tripleoclient/workflows/deployment.py"
	)
	src := readSource(t, tripleoclientSource(t), constants, utils, deploy, workflow)
	l, _ := New("/w", "overcloud")
	base := func(p string) string { rel, _ := filepath.Rel(l.Dir, p); return rel }
	pyFormat := func(format string) string { // '{}' and '%s' formatted with the stack name
		return strings.NewReplacer("{}", "overcloud", "%s", "overcloud").Replace(format)
	}
	assign := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + ` = '([^']*)'`).FindStringSubmatch(src[constants])
		if m == nil {
			t.Fatalf("constants.py has no %s = '...'", name)
		}
		return m[1]
	}
	if got, want := base(l.Passwords()), pyFormat(assign("PASSWORDS_ENV_FORMAT")); got != want {
		t.Errorf("passwords file %s, tripleoclient %s", got, want)
	}
	if got, want := base(l.Environment()), EnvironmentDir+"/"+pyFormat(assign("STACK_ENV_FILE_NAME")); got != want {
		t.Errorf("environment %s, tripleoclient %s", got, want)
	}

	outs := regexp.MustCompile(`(?s)STACK_OUTPUTS = \[(.*?)\]`).FindStringSubmatch(src[constants])
	if outs == nil {
		t.Fatal("constants.py has no STACK_OUTPUTS")
	}
	var names []string
	for _, m := range regexp.MustCompile(`'([A-Za-z]+)'`).FindAllStringSubmatch(outs[1], -1) {
		names = append(names, m[1])
	}
	if strings.Join(names, ",") != strings.Join(StackOutputs, ",") {
		t.Errorf("StackOutputs %v, tripleoclient %v", StackOutputs, names)
	}

	data := regexp.MustCompile(`(?s)EXPORT_DATA = \{(.*?)\n\s*\}\n`).FindStringSubmatch(src[constants])
	if data == nil {
		t.Fatal("constants.py has no EXPORT_DATA")
	}
	var params []string
	for _, m := range regexp.MustCompile(`"parameter": "([A-Za-z]+)"`).FindAllStringSubmatch(data[1], -1) {
		params = append(params, m[1])
	}
	var ours []string
	for _, it := range exportData {
		ours = append(ours, it.param)
		if it.file != "" && !strings.Contains(data[1], `"file": "`+it.file+`"`) {
			t.Errorf("export file %s not in EXPORT_DATA", it.file)
		}
		for _, k := range it.filter {
			if !strings.Contains(data[1], `"`+k+`"`) {
				t.Errorf("filter key %s not in EXPORT_DATA", k)
			}
		}
	}
	if strings.Join(params, ",") != strings.Join(ours, ",") {
		t.Errorf("export parameters %v, tripleoclient %v", ours, params)
	}
	if !regexp.MustCompile(`EXPORT_PASSWORD_EXCLUDE_PATTERNS = \[\s*'ceph\.\*'\s*\]`).MatchString(src[constants]) ||
		!exportPasswordExclude.MatchString("CephClusterFSID") || exportPasswordExclude.MatchString("AdminPassword") {
		t.Errorf("the export's password exclusion is not tripleoclient's 'ceph.*' (re.I)")
	}

	for _, c := range []struct{ file, fact, ours string }{
		{utils, `'%s-deployment_status.yaml' % stack_name`, base(l.Status())},
		{utils, `'%s-install-%s.tar.bzip2'`, base(l.Archive(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)))},
		{deploy, `"%s-export.yaml"`, base(l.Export())},
		{deploy, `"%s-cell-export.yaml"`, base(l.CellExport())},
		{workflow, `'%src' % stack_name`, base(l.RC())},
	} {
		if !strings.Contains(src[c.file], c.fact) {
			t.Errorf("%s no longer says %s", c.file, c.fact)
			continue
		}
		want := pyFormat(strings.Trim(strings.SplitN(c.fact, " % ", 2)[0], `'"`))
		if strings.Contains(c.fact, "install") {
			want = strings.Replace("overcloud-install-%s.tar.bzip2", "%s", "20240102030405", 1)
		}
		if c.ours != want {
			t.Errorf("%s, tripleoclient %s (%s)", c.ours, want, c.fact)
		}
	}
	// The archive's time is utcnow's %Y%m%d%H%M%S; the status file is
	// {'deployment_status': status} (our deployment_phase beside it).
	for _, fact := range []string{`datetime.datetime.utcnow().strftime('%Y%m%d%H%M%S')`, `{'deployment_status': status}`} {
		if !strings.Contains(src[utils], fact) {
			t.Errorf("utils.py no longer says %s", fact)
		}
	}
}
