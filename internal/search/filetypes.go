package search

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// fileTypes maps ripgrep's type names to their file name globs, copied by
// hand from ripgrep's default type table for common languages. The globs
// match the base name of a file (path.Match syntax).
var fileTypes = map[string][]string{
	"asm":        {"*.asm", "*.[sS]"},
	"awk":        {"*.awk"},
	"bazel":      {"*.bazel", "*.bzl", "*.BUILD", "*.bazelrc", "BUILD", "MODULE.bazel", "WORKSPACE", "WORKSPACE.bazel"},
	"c":          {"*.[chH]", "*.[chH].in", "*.cats"},
	"clojure":    {"*.clj", "*.cljc", "*.cljs", "*.cljx"},
	"cmake":      {"*.cmake", "CMakeLists.txt"},
	"config":     {"*.cfg", "*.conf", "*.config", "*.ini"},
	"cpp":        {"*.[ChH]", "*.cc", "*.[ch]pp", "*.[ch]xx", "*.hh", "*.inl", "*.[ChH].in", "*.cc.in", "*.[ch]pp.in", "*.[ch]xx.in", "*.hh.in"},
	"cs":         {"*.cs"},
	"css":        {"*.css", "*.scss"},
	"csv":        {"*.csv"},
	"dart":       {"*.dart"},
	"diff":       {"*.patch", "*.diff"},
	"docker":     {"*Dockerfile*"},
	"elixir":     {"*.ex", "*.eex", "*.exs", "*.heex", "*.leex", "*.livemd"},
	"elm":        {"*.elm"},
	"erlang":     {"*.erl", "*.hrl"},
	"fortran":    {"*.f", "*.F", "*.f77", "*.F77", "*.pfo", "*.f90", "*.F90", "*.f95", "*.F95"},
	"fsharp":     {"*.fs", "*.fsx", "*.fsi"},
	"go":         {"*.go"},
	"gradle":     {"*.gradle", "*.gradle.kts"},
	"graphql":    {"*.graphql", "*.graphqls"},
	"groovy":     {"*.groovy", "*.gradle"},
	"h":          {"*.h", "*.hh", "*.hpp"},
	"haskell":    {"*.hs", "*.lhs", "*.cpphs", "*.c2hs", "*.hsc"},
	"html":       {"*.htm", "*.html", "*.ejs"},
	"java":       {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"jinja":      {"*.j2", "*.jinja", "*.jinja2"},
	"js":         {"*.js", "*.jsx", "*.vue", "*.cjs", "*.mjs"},
	"json":       {"*.json", "composer.lock", "*.sarif"},
	"jsonl":      {"*.jsonl"},
	"julia":      {"*.jl"},
	"kotlin":     {"*.kt", "*.kts"},
	"less":       {"*.less"},
	"lisp":       {"*.el", "*.jl", "*.lisp", "*.lsp", "*.sc", "*.scm"},
	"log":        {"*.log"},
	"lua":        {"*.lua"},
	"make":       {"[Gg][Nn][Uu]makefile", "[Mm]akefile", "[Gg][Nn][Uu]makefile.am", "[Mm]akefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile.in", "*.mk", "*.mak"},
	"markdown":   {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"},
	"matlab":     {"*.m"},
	"nim":        {"*.nim", "*.nimf", "*.nimble", "*.nims"},
	"nix":        {"*.nix"},
	"objc":       {"*.h", "*.m"},
	"objcpp":     {"*.h", "*.mm"},
	"ocaml":      {"*.ml", "*.mli", "*.mll", "*.mly"},
	"perl":       {"*.perl", "*.pl", "*.PL", "*.plh", "*.plx", "*.pm", "*.t"},
	"php":        {"*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"},
	"powershell": {"*.ps1", "*.psm1", "*.psd1"},
	"protobuf":   {"*.proto"},
	"py":         {"*.py", "*.pyi"},
	"r":          {"*.R", "*.r", "*.Rmd", "*.Rnw"},
	"rst":        {"*.rst"},
	"ruby":       {"config.ru", "Gemfile", ".irbrc", "Rakefile", "*.gemspec", "*.rb", "*.rbw"},
	"rust":       {"*.rs"},
	"scala":      {"*.scala", "*.sbt"},
	"sh":         {".login", ".logout", ".profile", "profile", ".bash_login", "bash_login", ".bash_logout", "bash_logout", ".bash_profile", "bash_profile", ".bashrc", "bashrc", "*.bashrc", ".cshrc", "*.cshrc", ".kshrc", "*.kshrc", ".tcshrc", ".zshenv", "zshenv", ".zlogin", "zlogin", ".zlogout", "zlogout", ".zprofile", "zprofile", ".zshrc", "zshrc", "*.bash", "*.csh", "*.ksh", "*.sh", "*.tcsh", "*.zsh"},
	"solidity":   {"*.sol"},
	"sql":        {"*.sql", "*.psql"},
	"svelte":     {"*.svelte"},
	"svg":        {"*.svg"},
	"swift":      {"*.swift"},
	"tex":        {"*.tex", "*.ltx", "*.cls", "*.sty", "*.bib", "*.dtx", "*.ins"},
	"tf":         {"*.tf", "*.tfvars"},
	"toml":       {"*.toml", "Cargo.lock"},
	"ts":         {"*.ts", "*.tsx", "*.cts", "*.mts"},
	"txt":        {"*.txt"},
	"vb":         {"*.vb"},
	"vim":        {"*.vim", ".vimrc", ".gvimrc", "vimrc", "gvimrc", "_vimrc", "_gvimrc"},
	"vue":        {"*.vue"},
	"xml":        {"*.xml", "*.xml.dist", "*.dtd", "*.xsl", "*.xslt", "*.xsd", "*.xjb", "*.rng", "*.sch", "*.xhtml"},
	"yaml":       {"*.yaml", "*.yml"},
	"zig":        {"*.zig"},
}

// typeAliases are other names agents use for ripgrep's types.
var typeAliases = map[string]string{
	"python":     "py",
	"javascript": "js",
	"typescript": "ts",
	"golang":     "go",
	"rs":         "rust",
	"rb":         "ruby",
	"md":         "markdown",
	"yml":        "yaml",
	"shell":      "sh",
	"bash":       "sh",
	"c++":        "cpp",
	"csharp":     "cs",
	"kt":         "kotlin",
}

// TypeNames returns the known file type names, sorted.
func TypeNames() []string {
	names := make([]string, 0, len(fileTypes))
	for k := range fileTypes {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// TypeGlobs returns the file name globs of a type name (or alias) and
// whether the type is known.
func TypeGlobs(name string) ([]string, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := typeAliases[name]; ok {
		name = a
	}
	g, ok := fileTypes[name]
	return g, ok
}

// typeFilter selects files whose base name matches any glob of the
// selected types.
type typeFilter struct {
	exact    map[string]bool
	suffixes []string
	globs    []string
}

func newTypeFilter(types []string) (*typeFilter, error) {
	if len(types) == 0 {
		return nil, nil
	}
	f := &typeFilter{exact: map[string]bool{}}
	for _, t := range types {
		globs, ok := TypeGlobs(t)
		if !ok {
			return nil, &InvalidError{Field: "type", Message: "unknown file type " + strconv.Quote(t),
				Hint: "use a ripgrep type name: " + strings.Join(TypeNames(), ", ")}
		}
		for _, g := range globs {
			switch {
			case !strings.ContainsAny(g, "*?["):
				f.exact[g] = true
			case strings.HasPrefix(g, "*") && !strings.ContainsAny(g[1:], "*?["):
				f.suffixes = append(f.suffixes, g[1:])
			default:
				f.globs = append(f.globs, g)
			}
		}
	}
	return f, nil
}

func (f *typeFilter) match(name string) bool {
	if f.exact[name] {
		return true
	}
	for _, s := range f.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	for _, g := range f.globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
