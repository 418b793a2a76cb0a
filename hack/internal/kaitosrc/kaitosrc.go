// Package kaitosrc reads KAITO's own source files at a release tag of a
// clone of github.com/kaito-project/kaito, for the hack/derive-kaito-*
// commands: the release tags and their commits, the model list
// (supported_models.yaml), the hand-written Go presets
// (presets/workspace/models/<family>/model.go), the string maps that
// resolve names (builtinVLLMModels, LegacyBuiltinToCatalog) and the
// generated model catalog (model_catalog.yaml) with the KV cache bytes a
// token KAITO's generator derives from it.
//
// The Go files are read with go/parser, never run: a preset is read only
// in the shapes KAITO writes them (a registration in init, a method
// returning one `&model.PresetParam{…}` literal whose size and bytes per
// token are literals or constants, a method returning true or false), and
// anything else is an error rather than a guess.
package kaitosrc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/hack/internal/derived"
)

// Paths of the files read, relative to the repository.
const (
	ModelList   = "presets/workspace/models/supported_models.yaml"
	ModelsDir   = "presets/workspace/models"
	VLLMModel   = "presets/workspace/models/vllm_model.go"
	Catalog     = "presets/workspace/models/model_catalog.yaml"
	PluginGo    = "pkg/utils/plugin/plugin.go"
	presetFile  = "/model.go"
	hubPrefixRe = `^https://huggingface\.co/([^/]+/[^/]+)/commit/[0-9a-f]+$`
)

// Repo is a clone of github.com/kaito-project/kaito with its tags.
type Repo string

// Git runs git in the clone.
func (r Repo) Git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", string(r)}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Releases are the release tags (vX.Y.Z, no pre-releases) from first up to
// before end, oldest first.
func (r Repo) Releases(first, end *version.Version) ([]*version.Version, error) {
	tags, err := r.Git("tag", "--list", "v*")
	if err != nil {
		return nil, err
	}
	var out []*version.Version
	for _, t := range strings.Fields(string(tags)) {
		v, err := version.ParseSemantic(strings.TrimPrefix(t, "v"))
		if err != nil || v.PreRelease() != "" || v.LessThan(first) || !v.LessThan(end) {
			continue
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LessThan(out[j]) })
	return out, nil
}

// Commit is the commit a tag names.
func (r Repo) Commit(tag string) (string, error) {
	c, err := r.Git("rev-list", "-n1", tag)
	return strings.TrimSpace(string(c)), err
}

// Show is a file at a tag.
func (r Repo) Show(tag, path string) ([]byte, error) { return r.Git("show", tag+":"+path) }

// Has reports whether the file exists at the tag.
func (r Repo) Has(tag, path string) (bool, error) {
	out, err := r.Git("ls-tree", "--name-only", tag, "--", path)
	return len(bytes.TrimSpace(out)) > 0, err
}

// PresetFiles are the Go preset files at a tag, <family>/model.go under
// presets/workspace/models, sorted.
func (r Repo) PresetFiles(tag string) ([]string, error) {
	out, err := r.Git("ls-tree", "-r", "--name-only", tag, "--", ModelsDir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(f, ModelsDir+"/")
		if ok && strings.HasSuffix(f, presetFile) && strings.Count(rest, "/") == 1 {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

// SHA256 is a file's checksum, in hex.
func SHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// SupportedModel is one model of supported_models.yaml.
type SupportedModel struct {
	Name string
	// HuggingFace is `org/repo` from the model's `version`, a Hugging Face
	// commit URL; "" when it is none (the base image).
	HuggingFace string
	// DownloadAtRuntime: the weights are downloaded by the pod, not baked
	// into a `kaito-<preset>` image; false when the field is absent, as in
	// KAITO's metadata struct.
	DownloadAtRuntime    bool
	DownloadAuthRequired bool
}

var hfRepo = regexp.MustCompile(hubPrefixRe)

// SupportedModels reads supported_models.yaml.
func SupportedModels(data []byte) ([]SupportedModel, error) {
	var list struct {
		Models []struct {
			Name                 string `json:"name"`
			Version              string `json:"version"`
			DownloadAtRuntime    bool   `json:"downloadAtRuntime"`
			DownloadAuthRequired bool   `json:"downloadAuthRequired"`
		} `json:"models"`
	}
	if err := sigsyaml.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	out := make([]SupportedModel, 0, len(list.Models))
	for _, m := range list.Models {
		s := SupportedModel{Name: m.Name, DownloadAtRuntime: m.DownloadAtRuntime, DownloadAuthRequired: m.DownloadAuthRequired}
		if match := hfRepo.FindStringSubmatch(m.Version); match != nil {
			s.HuggingFace = match[1]
		}
		out = append(out, s)
	}
	return out, nil
}

// GoPreset is what one registered Go preset gives KAITO's node estimator.
type GoPreset struct {
	// Name is the name the preset is registered under.
	Name string
	// Size is TotalSafeTensorFileSize as written ("14.96Gi").
	Size string
	// BytesPerToken is the KV cache of one token.
	BytesPerToken int64
	// DistributedInference is what SupportDistributedInference returns.
	DistributedInference bool
	// DisableTensorParallelism, set in the preset's RuntimeParam.
	DisableTensorParallelism bool
	// Line of TotalSafeTensorFileSize in the file.
	Line int
}

// GoPresets reads the presets one model.go registers: each
// `plugin.KaitoModelRegister.Register(&plugin.Registration{Name: N,
// Instance: &v})` in init, v's type's GetInferenceParameters (one return
// of a `&model.PresetParam{…}` literal) and SupportDistributedInference
// (one return of true or false).
func GoPresets(path string, src []byte) ([]GoPreset, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	consts := constants(f)
	varType := map[string]string{}
	methods := map[string]*ast.FuncDecl{} // "type.Method"
	var registrations []*ast.CompositeLit
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, s := range d.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok && len(vs.Values) == 0 {
					for _, n := range vs.Names {
						varType[n.Name] = id.Name
					}
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil {
				if d.Name.Name == "init" {
					regs, err := registrationsIn(d)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", path, err)
					}
					registrations = append(registrations, regs...)
				}
				continue
			}
			if t := receiverType(d); t != "" {
				methods[t+"."+d.Name.Name] = d
			}
		}
	}
	if len(registrations) == 0 {
		return nil, fmt.Errorf("%s: no plugin.KaitoModelRegister.Register(&plugin.Registration{…}) in init", path)
	}
	var out []GoPreset
	for _, reg := range registrations {
		var nameExpr, instExpr ast.Expr
		for _, e := range reg.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				return nil, fmt.Errorf("%s:%d: a Registration without field names", path, fset.Position(e.Pos()).Line)
			}
			switch key(kv) {
			case "Name":
				nameExpr = kv.Value
			case "Instance":
				instExpr = kv.Value
			}
		}
		name, err := stringValue(nameExpr, consts)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: registration name: %w", path, fset.Position(reg.Pos()).Line, err)
		}
		inst := addressOf(instExpr)
		if inst == "" {
			return nil, fmt.Errorf("%s: preset %q: Instance is not &variable", path, name)
		}
		typ, ok := varType[inst]
		if !ok {
			return nil, fmt.Errorf("%s: preset %q: no `var %s T` declaration", path, name, inst)
		}
		p := GoPreset{Name: name}
		inf := methods[typ+".GetInferenceParameters"]
		if inf == nil {
			return nil, fmt.Errorf("%s: preset %q: type %s has no GetInferenceParameters", path, name, typ)
		}
		lit, err := returnedLiteral(inf, "model", "PresetParam")
		if err != nil {
			return nil, fmt.Errorf("%s: preset %q: %s.GetInferenceParameters: %w", path, name, typ, err)
		}
		if err := p.read(lit, consts, fset); err != nil {
			return nil, fmt.Errorf("%s: preset %q: %w", path, name, err)
		}
		dist := methods[typ+".SupportDistributedInference"]
		if dist == nil {
			return nil, fmt.Errorf("%s: preset %q: type %s has no SupportDistributedInference", path, name, typ)
		}
		if p.DistributedInference, err = ReturnedBool(dist); err != nil {
			return nil, fmt.Errorf("%s: preset %q: %s.SupportDistributedInference: %w", path, name, typ, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// RegisteredNames are the preset names a model.go registers in its init
// (`plugin.KaitoModelRegister.Register(&plugin.Registration{Name: N, …})`).
func RegisteredNames(path string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	consts := constants(f)
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != "init" {
			continue
		}
		regs, err := registrationsIn(fn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, reg := range regs {
			found := false
			for _, e := range reg.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok && key(kv) == "Name" {
					n, err := stringValue(kv.Value, consts)
					if err != nil {
						return nil, fmt.Errorf("%s: registration name: %w", path, err)
					}
					names, found = append(names, n), true
				}
			}
			if !found {
				return nil, fmt.Errorf("%s: a registration without Name", path)
			}
		}
	}
	return names, nil
}

// read takes the fields of a PresetParam literal the estimator reads:
// TotalSafeTensorFileSize and BytesPerToken at its top level, and
// DisableTensorParallelism there or in its RuntimeParam literal.
func (p *GoPreset) read(lit *ast.CompositeLit, consts map[string]ast.Expr, fset *token.FileSet) error {
	seen := map[string]bool{}
	var visit func(lit *ast.CompositeLit, top bool) error
	visit = func(lit *ast.CompositeLit, top bool) error {
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				return fmt.Errorf("a literal without field names")
			}
			k := key(kv)
			var err error
			switch {
			case k == "TotalSafeTensorFileSize" && top:
				p.Size, err = stringValue(kv.Value, consts)
				p.Line = fset.Position(kv.Pos()).Line
			case k == "BytesPerToken" && top:
				p.BytesPerToken, err = intValue(kv.Value, consts)
			case k == "DisableTensorParallelism":
				p.DisableTensorParallelism, err = boolValue(kv.Value)
			case k == "RuntimeParam" && top:
				inner, ok := kv.Value.(*ast.CompositeLit)
				if !ok {
					return fmt.Errorf("RuntimeParam is not a literal")
				}
				err = visit(inner, false)
			case k == "TotalSafeTensorFileSize" || k == "BytesPerToken":
				return fmt.Errorf("%s below the top level of the literal", k)
			default:
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if seen[k] && k != "RuntimeParam" {
				return fmt.Errorf("%s set twice", k)
			}
			seen[k] = true
		}
		return nil
	}
	if err := visit(lit, true); err != nil {
		return err
	}
	if p.Size == "" || p.BytesPerToken <= 0 {
		return fmt.Errorf("no TotalSafeTensorFileSize or no positive BytesPerToken in the PresetParam literal")
	}
	return nil
}

// ReturnedBool is the literal true or false a function's only statement
// returns.
func ReturnedBool(fn *ast.FuncDecl) (bool, error) {
	if fn.Body == nil || len(fn.Body.List) != 1 {
		return false, fmt.Errorf("not a single return statement")
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false, fmt.Errorf("not a single return statement")
	}
	return boolValue(ret.Results[0])
}

// MethodBool is ReturnedBool of the method typeName.method in a Go file.
func MethodBool(path string, src []byte, typeName, method string) (bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		return false, err
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == method && receiverType(fn) == typeName {
			v, err := ReturnedBool(fn)
			if err != nil {
				return false, fmt.Errorf("%s: %s.%s: %w", path, typeName, method, err)
			}
			return v, nil
		}
	}
	return false, fmt.Errorf("%s: no method %s.%s", path, typeName, method)
}

// StringMap is the package-level `var name = map[string]string{…}` of a Go
// file, every key and value a string literal; ok is false when the file
// declares no such variable.
func StringMap(path string, src []byte, name string) (m map[string]string, ok bool, err error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, false, err
	}
	for _, d := range f.Decls {
		g, isGen := d.(*ast.GenDecl)
		if !isGen || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != name {
					continue
				}
				if i >= len(vs.Values) {
					return nil, false, fmt.Errorf("%s: %s has no value", path, name)
				}
				lit, _ := vs.Values[i].(*ast.CompositeLit)
				var mt *ast.MapType
				if lit != nil {
					mt, _ = lit.Type.(*ast.MapType)
				}
				if mt == nil || !isIdent(mt.Key, "string") || !isIdent(mt.Value, "string") {
					return nil, false, fmt.Errorf("%s: %s is not a map[string]string literal", path, name)
				}
				m = map[string]string{}
				for _, e := range lit.Elts {
					kv, isKV := e.(*ast.KeyValueExpr)
					if !isKV {
						return nil, false, fmt.Errorf("%s: %s: an element without a key", path, name)
					}
					k, err1 := stringValue(kv.Key, nil)
					v, err2 := stringValue(kv.Value, nil)
					if err1 != nil || err2 != nil {
						return nil, false, fmt.Errorf("%s: %s: a key or value that is not a string literal", path, name)
					}
					if _, dup := m[k]; dup {
						return nil, false, fmt.Errorf("%s: %s: key %q twice", path, name, k)
					}
					m[k] = v
				}
				return m, true, nil
			}
		}
	}
	return nil, false, nil
}

// CatalogEntry is one model of model_catalog.yaml, as far as KAITO's
// generator sizes it (generator.CatalogEntry and loadFromCatalog).
type CatalogEntry struct {
	Name              string `json:"name"`
	ModelFileSize     string `json:"modelFileSize"`
	HiddenSize        int64  `json:"hiddenSize"`
	NumHiddenLayers   int64  `json:"numHiddenLayers"`
	NumAttentionHeads int64  `json:"numAttentionHeads"`
	NumKeyValueHeads  int64  `json:"numKeyValueHeads"`
	HeadDim           int64  `json:"headDim"`
	KVLoraRank        int64  `json:"kvLoraRank"`
	QKRopeHeadDim     int64  `json:"qkRopeHeadDim"`
	// Line of the entry's name in the file.
	Line int `json:"-"`
}

// ReadCatalog reads model_catalog.yaml.
func ReadCatalog(data []byte) ([]CatalogEntry, error) {
	var c struct {
		Models []CatalogEntry `json:"models"`
	}
	if err := sigsyaml.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	for i := range c.Models {
		e := &c.Models[i]
		if e.Name == "" || e.ModelFileSize == "" {
			return nil, fmt.Errorf("entry %d has no name or no modelFileSize", i)
		}
		for n, l := range lines {
			if strings.TrimSpace(l) == "- name: "+e.Name {
				e.Line = n + 1
				break
			}
		}
	}
	return c.Models, nil
}

// BytesPerToken is what KAITO's generator (calculateKVCacheTokenSize,
// presets/workspace/generator/generator.go, the same from v0.10.0 to
// v0.12.0) derives for a catalog entry: the head size hidden / heads when
// the entry gives none, the KV heads the attention heads when 0, then
// (kvLoraRank + qkRopeHeadDim) for latent attention (kvLoraRank > 0, the
// only value loadFromCatalog passes on) or 2 × KV heads × head size
// elements a layer, × every layer, × 2 bytes (fp16). Every layer counts:
// sliding-window and linear-attention layers as full attention.
func BytesPerToken(e CatalogEntry) int64 {
	headDim := e.HeadDim
	if headDim == 0 && e.NumAttentionHeads > 0 {
		headDim = e.HiddenSize / e.NumAttentionHeads
	}
	kvHeads := e.NumKeyValueHeads
	if kvHeads == 0 && e.NumAttentionHeads > 0 {
		kvHeads = e.NumAttentionHeads
	}
	var elements int64
	switch {
	case e.KVLoraRank > 0:
		elements = e.KVLoraRank + e.QKRopeHeadDim
	case e.NumAttentionHeads > 0 && kvHeads > 0 && headDim > 0:
		elements = 2 * kvHeads * headDim
	}
	return elements * e.NumHiddenLayers * 2
}

// constants are a file's package-level constants whose values are string
// or integer expressions.
func constants(f *ast.File) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					out[n.Name] = vs.Values[i]
				}
			}
		}
	}
	return out
}

func registrationsIn(fn *ast.FuncDecl) ([]*ast.CompositeLit, error) {
	var out []*ast.CompositeLit
	for _, st := range fn.Body.List {
		es, ok := st.(*ast.ExprStmt)
		if !ok {
			continue
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok || selectorPath(call.Fun) != "plugin.KaitoModelRegister.Register" {
			continue
		}
		if len(call.Args) != 1 {
			return nil, fmt.Errorf("a Register call with %d arguments", len(call.Args))
		}
		u, ok := call.Args[0].(*ast.UnaryExpr)
		if !ok || u.Op != token.AND {
			return nil, fmt.Errorf("a Register call of something other than &plugin.Registration{…}")
		}
		lit, ok := u.X.(*ast.CompositeLit)
		if !ok || selectorPath(lit.Type) != "plugin.Registration" {
			return nil, fmt.Errorf("a Register call of something other than &plugin.Registration{…}")
		}
		out = append(out, lit)
	}
	return out, nil
}

// returnedLiteral is the `&pkg.Type{…}` a function's only return returns;
// statements before it are refused (they could change it).
func returnedLiteral(fn *ast.FuncDecl, pkg, typ string) (*ast.CompositeLit, error) {
	if fn.Body == nil || len(fn.Body.List) != 1 {
		return nil, fmt.Errorf("not a single return statement")
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, fmt.Errorf("not a single return statement")
	}
	u, ok := ret.Results[0].(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return nil, fmt.Errorf("does not return &%s.%s{…}", pkg, typ)
	}
	lit, ok := u.X.(*ast.CompositeLit)
	if !ok || selectorPath(lit.Type) != pkg+"."+typ {
		return nil, fmt.Errorf("does not return &%s.%s{…}", pkg, typ)
	}
	return lit, nil
}

// addressOf is v of `&v`, "" for anything else.
func addressOf(e ast.Expr) string {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		if id, ok := u.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return ""
}

func receiverType(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) != 1 {
		return ""
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func selectorPath(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if p := selectorPath(e.X); p != "" {
			return p + "." + e.Sel.Name
		}
	}
	return ""
}

func key(kv *ast.KeyValueExpr) string {
	if id, ok := kv.Key.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// stringValue evaluates a string literal, a constant of the file, or a +
// of those; nothing else.
func stringValue(e ast.Expr, consts map[string]ast.Expr) (string, error) {
	return evalString(e, consts, 0)
}

func evalString(e ast.Expr, consts map[string]ast.Expr, depth int) (string, error) {
	if depth > 16 {
		return "", fmt.Errorf("constants nest too deeply")
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return strconv.Unquote(e.Value)
		}
	case *ast.Ident:
		if c, ok := consts[e.Name]; ok {
			return evalString(c, consts, depth+1)
		}
		return "", fmt.Errorf("%s is not a constant of the file", e.Name)
	case *ast.ParenExpr:
		return evalString(e.X, consts, depth+1)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, err := evalString(e.X, consts, depth+1)
			if err != nil {
				return "", err
			}
			b, err := evalString(e.Y, consts, depth+1)
			return a + b, err
		}
	}
	return "", fmt.Errorf("not a string literal or constant")
}

// intValue evaluates a decimal integer literal or a constant of the file
// that is one.
func intValue(e ast.Expr, consts map[string]ast.Expr) (int64, error) {
	for depth := 0; depth < 16; depth++ {
		switch v := e.(type) {
		case *ast.BasicLit:
			if v.Kind == token.INT {
				return strconv.ParseInt(v.Value, 10, 64)
			}
			return 0, fmt.Errorf("not an integer literal")
		case *ast.Ident:
			c, ok := consts[v.Name]
			if !ok {
				return 0, fmt.Errorf("%s is not a constant of the file", v.Name)
			}
			e = c
		default:
			return 0, fmt.Errorf("not an integer literal or constant")
		}
	}
	return 0, fmt.Errorf("constants nest too deeply")
}

func boolValue(e ast.Expr) (bool, error) {
	if id, ok := e.(*ast.Ident); ok {
		switch id.Name {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, fmt.Errorf("not the literal true or false")
}

// Main is a hack/derive-kaito-* command: it reads -repo (a clone of
// KAITO with its tags), derives its file with derive and writes it to -o,
// or with -check only says whether the file is current. It exits.
func Main[T any](command, output string, derive func(Repo) (T, error)) {
	repo := flag.String("repo", "", "a clone of github.com/kaito-project/kaito with its tags")
	out := flag.String("o", output, "the file to write")
	check := flag.Bool("check", false, "write nothing; exit 1 when the file differs from what the clone derives")
	flag.Parse()
	if *repo == "" {
		fmt.Fprintf(os.Stderr, "%s: -repo is required (a clone of github.com/kaito-project/kaito)\n", command)
		os.Exit(2)
	}
	v, err := derive(Repo(*repo))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
		os.Exit(1)
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
		os.Exit(1)
	}
	data = append(data, '\n')
	os.Exit(derived.Output(command, *out, *repo, data, *check, os.Stdout, os.Stderr))
}
