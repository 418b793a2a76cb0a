package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/filters"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/safefile"
	"github.com/airunway-render/airunway-render/internal/termsafe"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
	"github.com/airunway-render/airunway-render/render"
)

// `airunway-render catalog add`: a model's facts, read from its
// config.json and safetensors index, as a row of a ModelCatalog file kept
// in Git beside the models (docs/will-it-run.md). The file is edited as
// migrate edits one (cli/migrate_files.go): comments, order and other
// rows kept, replaced whole only when it still holds what was read. With
// --from-hub, and only then, the two files come from the Hugging Face Hub
// (cli/catalog_hub.go): the one command that touches the network.

// Names of the files a model's facts are read from, as fit.ReadDir reads
// them, and the single checkpoint whose size stands in for an index.
const (
	configFile      = "config.json"
	indexFile       = "model.safetensors.index.json"
	quantFile       = "hf_quant_config.json" // NVIDIA ModelOpt's precision
	singleCheckpt   = "model.safetensors"
	maxModelFileLen = 8 << 20 // each file, as fit.ReadDir bounds it
)

type catalogAddOptions struct {
	modelDir  string
	fromHub   bool
	revision  string
	tokenFile string
	timeout   time.Duration
	file      string
	output    string
}

func newCatalogCommand(s streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "catalog",
		Short: "Commands about ModelCatalog files: model facts for the memory fit, kept in Git",
		Example: `  # a private model's facts from its config.json, into the catalog beside the models
  airunway-render catalog add my-org/house-model --model-dir /models/house-model -f models/catalog.yaml`,
		Args: cobra.NoArgs, // an argument is an unknown subcommand
		RunE: func(*cobra.Command, []string) error { return usagef("a subcommand is required") },
	}
	c.AddCommand(newCatalogAddCommand(s))
	return c
}

func newCatalogAddCommand(s streams) *cobra.Command {
	o := catalogAddOptions{revision: "main", timeout: time.Minute}
	cmd := &cobra.Command{
		Use:   "add ID (--model-dir DIR | --from-hub [--revision REV] [--token-file FILE]) (-f FILE | -o yaml|json)",
		Short: "Add or replace a model's facts in a ModelCatalog file",
		Long: `Read the facts the memory fit needs about model ID (the spec.model.id of the
models that use them) from its config.json and model.safetensors.index.json
(the weights' exact size; without one, the size of a single
model.safetensors) and, when config.json names no quantization, NVIDIA
ModelOpt's hf_quant_config.json, and write them as the row of ID in the ModelCatalog
file -f FILE: a row of the same id (without regard to case) is replaced,
else the row is added to the file's ModelCatalog. Comments, order and the
other rows are kept; a file that does not exist is created with a
ModelCatalog named after it, annotated local-config. The file is replaced
whole, only if nobody changed it meanwhile, and not at all when the row is
already there as it would be written, or when the file would not render
(an invalid row, a second ModelCatalog with the same id). Without -f the
row is printed instead (-o yaml, the default, or json).

--model-dir DIR reads the two files from a local directory: offline,
regular files of at most 8 MiB each. --from-hub fetches them from the
Hugging Face Hub instead, and whether the model is gated: the only
airunway-render command that reaches the network, and only with this flag.
The Hub is HF_ENDPOINT (default https://huggingface.co; http:// only on a
loopback address); the token, optional for public models, comes from
--token-file or HF_TOKEN and is sent to that host alone. Every response is
at most 8 MiB, redirects to another host are refused, and the whole fetch
ends after --timeout. The row's source records the files, their sha256, and
the revision and commit they came from.

render, plan, preview, build, the KRM function and the Argo CD plugin read
the ModelCatalog among their inputs: its facts win over the shipped
catalog, and --model-dir of render, plan and preview wins over them.`,
		Example: `  # from a local copy of the model (config.json and the safetensors index suffice)
  airunway-render catalog add my-org/house-model --model-dir /models/house-model -f models/catalog.yaml

  # from the Hugging Face Hub (the only command that reaches the network), with a token for a gated model
  HF_TOKEN=hf_... airunway-render catalog add meta-llama/Llama-3.2-1B --from-hub -f models/catalog.yaml

  # print the row instead of writing it
  airunway-render catalog add my-org/house-model --model-dir /models/house-model -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(cmd, args); err != nil {
				return err
			}
			return runCatalogAdd(cmd, args[0], o, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.modelDir, "model-dir", "", "read the model's config.json, model.safetensors.index.json and hf_quant_config.json from this local directory")
	f.BoolVar(&o.fromHub, "from-hub", false, "fetch them from the Hugging Face Hub (HF_ENDPOINT, default https://huggingface.co): the only network access of airunway-render")
	f.StringVar(&o.revision, "revision", o.revision, "with --from-hub: the branch, tag or commit to read")
	f.StringVar(&o.tokenFile, "token-file", "", "with --from-hub: a file holding the Hugging Face token (default: the HF_TOKEN environment variable; none for a public model)")
	f.DurationVar(&o.timeout, "timeout", o.timeout, "with --from-hub: give up after this long")
	f.StringVarP(&o.file, "filename", "f", "", "the ModelCatalog file to add the row to (created when it does not exist)")
	f.StringVarP(&o.output, "output", "o", "", "print the row instead of writing a file: yaml or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *catalogAddOptions) validate(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) != 1:
		return usagef("takes exactly one argument, the model's id (its spec.model.id), got %d", len(args))
	case args[0] == "":
		return usagef("the model's id must not be empty")
	case (o.modelDir == "") == !o.fromHub:
		return usagef("give exactly one of `--model-dir DIR` (a local copy of the model) and `--from-hub`")
	case !o.fromHub && (cmd.Flags().Changed("revision") || o.tokenFile != "" || cmd.Flags().Changed("timeout")):
		return usagef("`--revision`, `--token-file` and `--timeout` are for `--from-hub`")
	case o.file != "" && o.output != "":
		return usagef("`-o` prints the row instead of writing it to `-f`: use one of them")
	case o.file == stdinName:
		return usagef("`-f` names the ModelCatalog file to edit in place and cannot be `-`; without `-f` the row is printed")
	case o.timeout <= 0:
		return usagef("`--timeout` must be positive, got %s", o.timeout)
	}
	if o.output == "" && o.file == "" {
		o.output = "yaml"
	}
	if o.output != "" {
		if err := checkOutputFormat(o.output); err != nil {
			return err
		}
	}
	if o.file != "" {
		if ext := filepath.Ext(o.file); ext != ".yaml" && ext != ".yml" {
			return usagef("`-f` must name a .yaml or .yml file (render reads no other from a directory), got %q", o.file)
		}
	}
	return nil
}

func runCatalogAdd(cmd *cobra.Command, id string, o catalogAddOptions, s streams) error {
	var row hub.CatalogModel
	var err error
	if o.fromHub {
		row, err = hubRow(cmd, id, o)
	} else {
		row, err = localRow(id, o.modelDir)
	}
	if err != nil {
		reportError(s.errOut, err)
		fmt.Fprintf(s.errOut, "airunway-render catalog add: nothing was written\n")
		return exitCode(1)
	}
	if problems := rowProblems(id, &row); len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(s.errOut, "[error] %s\n", termsafe.Escape(p))
		}
		fmt.Fprintf(s.errOut, "airunway-render catalog add: nothing was written\n")
		return exitCode(1)
	}
	if o.file == "" {
		return printRow(s.out, &row, o.output)
	}
	return addRow(o.file, &row, s)
}

// readsQuantFile: fit.ReadDir (and vLLM) read hf_quant_config.json only
// for a checkpoint whose config.json names no quantization; a ModelOpt
// precision in the row came from it.
func readsQuantFile(m fit.Model) bool {
	return m.Quantization != nil && m.Quantization.Method == "modelopt"
}

// localRow reads a model's facts from a directory, as render --model-dir
// does (fit.ReadDir), with the size of a single model.safetensors when
// there is no index, and records the files' checksums.
func localRow(id, dir string) (hub.CatalogModel, error) {
	if _, err := os.Stat(filepath.Join(dir, configFile)); errors.Is(err, fs.ErrNotExist) {
		return hub.CatalogModel{}, fmt.Errorf("--model-dir %s: holds no %s; name the directory of the model's files (%s, and %s when the weights are sharded)", dir, configFile, configFile, indexFile)
	}
	m, err := fit.ReadDir(id, dir)
	if err != nil {
		return hub.CatalogModel{}, fmt.Errorf("--model-dir %s: %v", dir, err)
	}
	files := []string{configFile}
	if _, err := os.Stat(filepath.Join(dir, indexFile)); err == nil {
		files = append(files, indexFile)
	}
	sharded := len(files) == 2
	if _, err := os.Stat(filepath.Join(dir, quantFile)); err == nil && readsQuantFile(m) {
		files = append(files, quantFile)
	}
	var parts []string
	for _, name := range files {
		sum, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return hub.CatalogModel{}, fmt.Errorf("--model-dir %s: %v", dir, err)
		}
		parts = append(parts, fmt.Sprintf("%s (sha256:%s)", name, sum))
	}
	if !sharded {
		size, err := localCheckpointSize(filepath.Join(dir, singleCheckpt))
		if err != nil {
			return hub.CatalogModel{}, fmt.Errorf("--model-dir %s: %v", dir, err)
		}
		if size > 0 {
			m.WeightBytes = size
			parts = append(parts, fmt.Sprintf("%s (%d bytes)", singleCheckpt, size))
		}
	}
	return hub.CatalogModel{Model: m, Source: strings.Join(parts, ", ") + " of the directory " + dir}, nil
}

// fileSHA256 is the checksum of a regular file of at most 8 MiB.
func fileSHA256(path string) (string, error) {
	f, _, err := safefile.Open(path, os.O_RDONLY)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	_, err = safefile.CopyAtMost(h, f, maxModelFileLen)
	if tooLarge := (*safefile.TooLarge)(nil); errors.As(err, &tooLarge) {
		return "", fmt.Errorf("%s: larger than %d MiB, not a model's configuration", path, maxModelFileLen>>20)
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// localCheckpointSize is the size of a single safetensors checkpoint, 0
// when there is none; it is stat'ed, never read.
func localCheckpointSize(path string) (int64, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, err
	case !info.Mode().IsRegular():
		return 0, fmt.Errorf("%s: %v", path, safefile.NotRegular{Mode: info.Mode()})
	case info.Size() >= 1<<50:
		return 0, fmt.Errorf("%s: %d bytes is past any model's weights", path, info.Size())
	}
	return info.Size(), nil
}

// rowProblems holds the row to what the renderer accepts
// (hub.ValidateModelCatalog), so that catalog add never writes a row that
// fails a render.
func rowProblems(id string, row *hub.CatalogModel) []string {
	c := &hub.ModelCatalog{Spec: hub.ModelCatalogSpec{Models: []hub.CatalogModel{*row}}}
	c.Name = "row"
	var out []string
	for _, p := range hub.ValidateModelCatalog(c) {
		msg := p.Message
		if field := strings.TrimPrefix(strings.TrimPrefix(p.Field, "spec.models[0]"), "."); field != "" {
			msg = "`" + field + "` " + msg
		}
		out = append(out, fmt.Sprintf("the facts read for %s cannot be a ModelCatalog row: %s", id, msg))
	}
	return out
}

// printRow prints the row as -o asks: a YAML mapping to paste under
// spec.models, or a JSON object.
func printRow(w io.Writer, row *hub.CatalogModel, format string) error {
	if format == "json" {
		js, err := json.MarshalIndent(row, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", js)
		return err
	}
	n, err := rowNode(row)
	if err != nil {
		return err
	}
	s, err := n.String()
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, s)
	return err
}

// rowNode is the row as a YAML mapping in block style, its keys in the
// order of fit.Model's fields (id first), then source.
func rowNode(row *hub.CatalogModel) (*yaml.RNode, error) {
	js, err := json.Marshal(row)
	if err != nil {
		return nil, err
	}
	n, err := yaml.Parse(string(js)) // JSON is YAML, in flow style
	if err != nil {
		return nil, err
	}
	blockStyle(n.YNode())
	return n, nil
}

func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// addRow adds or replaces the row in the ModelCatalog file, creating the
// file when it does not exist.
func addRow(file string, row *hub.CatalogModel, s streams) error {
	_, err := os.Lstat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return createCatalog(file, row, s)
	}
	scope, err := newNamedScope([]string{file})
	if err != nil {
		return fail(err)
	}
	defer scope.close()
	m, err := readForMigration(scope, file, map[fileID]bool{}, budget.New())
	if err != nil {
		diag.List{fileProblem(file, "cannot read", err)}.Report(s.errOut, "no file was changed")
		return exitCode(1)
	}
	data := m.data
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte(newCatalogDoc(file)) // an empty file: as a new one
	}
	m.out, m.notes, err = editCatalog(file, data, row)
	if err != nil {
		var l problemsError
		if errors.As(err, &l) {
			l.list.Report(s.errOut, "no file was changed")
		} else {
			diag.List{{Severity: diag.Error, File: file, Message: err.Error()}}.Report(s.errOut, "no file was changed")
		}
		return exitCode(1)
	}
	if m.out == nil {
		printNotes(s.out, *m)
		return nil
	}
	if err := m.target.checkWritable(m.read); err != nil {
		diag.List{fileProblem(file, "cannot write", err)}.Report(s.errOut, "no file was changed")
		return exitCode(1)
	}
	m.data = nil
	return writeMigrations([]migration{*m}, "needed the row", s.out, s.errOut)
}

// problemsError carries problems (with their files and fields) as an
// error.
type problemsError struct{ list diag.List }

func (e problemsError) Error() string { return fmt.Sprint(e.list) }

// editCatalog returns the file's new content with the row added to, or
// replaced in, its ModelCatalog; nil content (and a note) when the row is
// there already as it would be written. The ModelCatalog is the one that
// has a row of the id, else the file's only one; the result must render
// (render.CatalogFacts), or nothing is written.
func editCatalog(file string, data []byte, row *hub.CatalogModel) ([]byte, []string, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), PreserveSeqIndent: true}).Read()
	if err != nil {
		return nil, nil, fmt.Errorf("is not YAML kyaml can read: %v", err)
	}
	var catalogs []*yaml.RNode
	var others []string
	for _, n := range nodes {
		if p, bad := versions.CheckShape(n); bad {
			return nil, nil, problemsError{diag.List{withFile(p, file)}}
		}
		group, _, _ := strings.Cut(n.GetApiVersion(), "/")
		if group == hub.Group && n.GetKind() == hub.KindModelCatalog {
			catalogs = append(catalogs, n)
		} else {
			others = append(others, fmt.Sprintf("%s %q", n.GetKind(), n.GetName()))
		}
	}
	target, index, err := catalogFor(catalogs, row.ID)
	if err != nil {
		if len(catalogs) == 0 {
			err = fmt.Errorf("holds no ModelCatalog (%s): name a ModelCatalog file, or a file that does not exist yet for catalog add to create", firstOf(others, 5))
		}
		return nil, nil, err
	}
	newRow, err := rowNode(row)
	if err != nil {
		return nil, nil, err
	}
	models, err := target.Pipe(yaml.LookupCreate(yaml.SequenceNode, "spec", "models"))
	if err != nil {
		return nil, nil, fmt.Errorf("ModelCatalog %q: spec.models: %v", target.GetName(), err)
	}
	switch ml := models.YNode(); {
	case ml.Kind == yaml.ScalarNode && ml.Tag == yaml.NodeTagNull:
		ml.Kind, ml.Tag, ml.Value = yaml.SequenceNode, yaml.NodeTagSeq, "" // `models:` with no rows yet
	case ml.Kind != yaml.SequenceNode:
		return nil, nil, fmt.Errorf("ModelCatalog %q: spec.models must be a list of rows", target.GetName())
	}
	ref := "ModelCatalog " + target.GetName()
	var note string
	if index >= 0 {
		old := models.YNode().Content[index]
		same, err := sameRow(old, row)
		if err != nil {
			return nil, nil, err
		}
		if same {
			return nil, []string{fmt.Sprintf("%s: the row of %s is unchanged", ref, row.ID)}, nil
		}
		newRow.YNode().HeadComment = old.HeadComment // the comment above the row stays with it
		models.YNode().Content[index] = newRow.YNode()
		note = fmt.Sprintf("%s: replaced the row of %s (spec.models[%d])", ref, row.ID, index)
	} else {
		models.YNode().Content = append(models.YNode().Content, newRow.YNode())
		models.YNode().Style = 0 // `models: []` becomes a block sequence
		note = fmt.Sprintf("%s: added the row of %s (spec.models[%d])", ref, row.ID, len(models.YNode().Content)-1)
	}
	if err := checkCatalogs(file, catalogs); err != nil {
		return nil, nil, err
	}
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return nil, nil, fmt.Errorf("cannot write: %v", err)
	}
	return out.Bytes(), []string{note}, nil
}

// catalogFor picks the ModelCatalog and the row of id in it (-1: none,
// the row is added): the catalog with a row of id, else the only one.
func catalogFor(catalogs []*yaml.RNode, id string) (*yaml.RNode, int, error) {
	for _, c := range catalogs {
		models, err := c.Pipe(yaml.Lookup("spec", "models"))
		if err != nil || models == nil || models.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for i, el := range models.YNode().Content {
			if el.Kind != yaml.MappingNode {
				continue
			}
			if v := yaml.NewRNode(el).Field("id"); v != nil && strings.EqualFold(yaml.GetValue(v.Value), id) {
				return c, i, nil
			}
		}
	}
	switch len(catalogs) {
	case 0:
		return nil, 0, errors.New("holds no ModelCatalog")
	case 1:
		return catalogs[0], -1, nil
	}
	names := make([]string, len(catalogs))
	for i, c := range catalogs {
		names[i] = fmt.Sprintf("%q", c.GetName())
	}
	return nil, 0, fmt.Errorf("holds %d ModelCatalogs (%s) and none has a row of %s: keep one ModelCatalog per file for catalog add, or add the row to one of them by hand", len(catalogs), strings.Join(names, ", "), id)
}

// sameRow reports whether the row in the file says exactly what row says,
// however it is laid out.
func sameRow(old *yaml.Node, row *hub.CatalogModel) (bool, error) {
	was, l := manifest.ObjectJSON(yaml.NewRNode(old))
	if l.HasErrors() {
		return false, nil // a row of the wrong shape is replaced
	}
	now, err := json.Marshal(row)
	if err != nil {
		return false, err
	}
	a, errA := jsonValue(was)
	b, errB := jsonValue(now)
	return errA == nil && errB == nil && reflect.DeepEqual(a, b), nil
}

// jsonValue decodes JSON with its numbers as written.
func jsonValue(js []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// checkCatalogs decodes and validates the file's ModelCatalogs as a
// render would: catalog add writes no file a render refuses.
func checkCatalogs(file string, catalogs []*yaml.RNode) error {
	_, l := render.CatalogFacts(catalogs, nil, nil)
	if !l.HasErrors() {
		return nil
	}
	for i := range l {
		l[i] = withFile(l[i], file)
		for _, n := range catalogs {
			if l[i].Field != "" && l[i].Resource.Name == n.GetName() && l[i].Resource.Namespace == n.GetNamespace() {
				l[i].Line = yamlerr.FieldLine(n.YNode(), l[i].Field)
			}
		}
	}
	return problemsError{l}
}

func withFile(p diag.Problem, file string) diag.Problem {
	if p.File == "" {
		p.File = file
	}
	return p
}

// createCatalog writes a new ModelCatalog file holding the row: a
// ModelCatalog named after the file, annotated local-config. The file
// appears whole or not at all, and never over one that another process
// created meanwhile.
func createCatalog(file string, row *hub.CatalogModel, s streams) error {
	out, notes, err := editCatalog(file, []byte(newCatalogDoc(file)), row)
	if err != nil {
		var l problemsError
		if errors.As(err, &l) {
			l.list.Report(s.errOut, "no file was created")
		} else {
			diag.List{{Severity: diag.Error, File: file, Message: err.Error()}}.Report(s.errOut, "no file was created")
		}
		return exitCode(1)
	}
	if err := createFile(file, out); err != nil {
		diag.List{{Severity: diag.Error, File: file, Message: "cannot create: " + err.Error()}}.Report(s.errOut, "no file was created")
		return exitCode(1)
	}
	for _, n := range notes {
		fmt.Fprintf(s.out, "%s: created; %s\n", file, n)
	}
	return nil
}

// newCatalogDoc is a new file's content before its first row.
func newCatalogDoc(file string) string {
	return fmt.Sprintf(`# Model facts for the memory fit, kept beside the models (docs/will-it-run.md);
# airunway-render catalog add adds or replaces a row.
apiVersion: %s
kind: %s
metadata:
  name: %s
  annotations:
    %s: "true"
spec:
  models: []
`, v1alpha1.APIVersion, hub.KindModelCatalog, catalogNameFor(file), filters.LocalConfigAnnotation)
}

// catalogNameFor names a new file's ModelCatalog after the file: its base
// name without the extension, as a DNS-1123 name (models/House_Models.yaml:
// house-models).
func catalogNameFor(file string) string {
	base := strings.ToLower(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	name := strings.Trim(nonName.ReplaceAllString(base, "-"), "-.")
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	if name == "" {
		return "models"
	}
	return name
}

var nonName = regexp.MustCompile(`[^a-z0-9.-]+`)
