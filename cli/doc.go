// Package cli is airunway-render's command line, on spf13/cobra as
// kubectl, kustomize and helm are; cmd/airunway-render runs it when it has
// arguments (without, it runs the KRM function, package fn). Each command
// is a file:
//
//   - render.go: `render PATH...` renders YAML files and directories, as a
//     stream or one file per object under --output-dir (a
//     rendered-manifests directory for Flux or Argo CD);
//   - diff.go: `diff OLD_REF [NEW_REF] -- PATH...` renders PATHs at two git
//     revisions (internal/gitsnap) and shows how the objects differ
//     (internal/objdiff), as text or a pull-request comment;
//   - preview.go: `preview --from --to PATH...` renders for a cluster before
//     and after an upgrade and flags what the cluster will not take in
//     place, with the providers' own upgrade notes (providers.UpgradeNoter);
//   - migrate.go: `migrate PATH...` rewrites files in place with the served
//     version's migrations; without PATHs it is fn.RunMigrate;
//   - build.go: `build DIR`, a kustomization built in process
//     (internal/kbuild), within --root and --timeout;
//   - argocd.go: `argocd generate`, the Argo CD Config Management Plugin;
//   - version.go: the version and the compatibility matrix
//     (capabilities.Matrix).
//
// inputs.go reads YAML for all of them, one document at a time
// (manifest.ReadDocuments), charged to the run's input budget
// (internal/budget), only regular files (internal/safefile), either from
// the paths the user names, a named directory's files confined to the
// named paths (scope.go), or, for diff and the Argo CD plugin, whose files
// a pull request controls, through an os.Root that no read can leave.
// output.go writes streams (as kyaml writes them: manifest.EncodeDocument,
// WriteStream) and --output-dir trees through an os.Root of the
// directory, atomically; migrate_files.go rewrites files in place, keeping
// their links, mode, owner and concurrent edits.
//
// Exit status: 0 on success, 1 on any error (nothing is written then); 2
// and 3 for diff, preview and migrate --check as their help says.
package cli
