package cli

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/airunway-render/airunway-render/internal/safefile"
)

// How `migrate` reads and rewrites files. It runs on anyone's commit, so
// the files are as hostile as the YAML in them: a symbolic link may lead
// anywhere on the machine, a name may be a FIFO, and another process (an
// editor, a second run) may write a file while migrate works on it. So a
// file is reached only inside the paths the user named, read only when it
// is a regular file, and replaced only when it still holds what was read,
// keeping its mode, owner and hard links.

// fileSnapshot is what migrate saw of a file when it read it: what a
// rewrite must keep (inode, links, mode, owner) and what tells a write by
// someone else since (size, modification time, content).
type fileSnapshot struct {
	dev, ino, links uint64
	uid, gid        int
	perm            fs.FileMode
	size            int64
	modTime         time.Time
	sum             [sha256.Size]byte
}

// fileID is a file's identity, whatever its names: two names of one inode
// (a link and its target, two hard links) are migrated once.
type fileID struct{ dev, ino uint64 }

func (s fileSnapshot) id() fileID { return fileID{s.dev, s.ino} }

// writeOutcome is what a write left in the file; the run's summary names
// the files of each.
type writeOutcome int

const (
	notWritten    writeOutcome = iota // the file is as it was
	written                           // the file holds the migrated content
	partlyWritten                     // an in-place write failed midway
)

// refusal is a file migrate will not read or write; its text is the whole
// message, where an I/O error gets "cannot read:" or "cannot write:".
type refusal struct{ msg string }

func (r refusal) Error() string { return r.msg }

func refusef(format string, args ...any) error { return refusal{fmt.Sprintf(format, args...)} }

var errChangedMeanwhile = refusal{"changed while migrate ran (another process wrote it); it was left as that process left it: run migrate again"}

// errCannotReplace: a replacement would not keep the file's owner, or the
// directory takes no new file; the file is written in place instead.
var errCannotReplace = errors.New("cannot replace the file")

// Points the tests use to act between two steps of a write: to change the
// file behind migrate's back, or to see and fail its fsyncs.
var (
	testHookBeforeVerify func(name string)
	syncFile             = (*os.File).Sync
)

func snapshotOf(info fs.FileInfo, data []byte) fileSnapshot {
	s := fileSnapshot{perm: info.Mode().Perm(), size: info.Size(), modTime: info.ModTime(), sum: sha256.Sum256(data)}
	s.dev, s.ino, s.links, s.uid, s.gid = fileIdentity(info)
	return s
}

// checkWritable refuses a file without write permission. Root may write
// any file, so a mode that lets no one write counts as read-only too: the
// owner asked for the file to be left alone. Opening for writing (without
// truncating) asks the kernel, which knows ACLs and read-only mounts.
func (t namedFile) checkWritable(s fileSnapshot) error {
	readOnly := refusef("is read-only (mode %s); migrate must not rewrite a file without write permission: make it writable (`chmod u+w`) or leave it out of the paths", s.perm)
	if s.perm&0o222 == 0 {
		return readOnly
	}
	f, _, err := t.open(os.O_WRONLY)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return readOnly
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// write gives t the content data, if t still holds what s saw.
//
// A file with one name is replaced: a temporary file in the same directory
// is written, given the old mode and owner, fsynced, and renamed over it,
// and the directory is fsynced; a crash leaves the old file or the new,
// never half of one. A rename gives the name a new inode, though, so a
// file with more than one hard link is written in place instead, through
// the inode all its names share: otherwise the other names would keep the
// old content and the link would silently break. So is a file whose owner
// a replacement cannot keep (another user's file we may only write), or
// in a directory that takes no new file. In place is not atomic: a crash
// midway can leave a mix, which is why it is kept to these files, which a
// rename would damage anyway; the file is under version control, where
// its old content remains.
func (t namedFile) write(s fileSnapshot, data []byte) (writeOutcome, error) {
	if s.links > 1 {
		return t.writeInPlace(s, data)
	}
	outcome, err := t.replace(s, data)
	if errors.Is(err, errCannotReplace) {
		return t.writeInPlace(s, data)
	}
	return outcome, err
}

func (t namedFile) replace(s fileSnapshot, data []byte) (writeOutcome, error) {
	dir := filepath.Dir(t.rel)
	tmp, tmpName, err := safefile.CreateTemp(t.root, dir, "airunway-render-migrate", 0o600)
	if errors.Is(err, fs.ErrPermission) {
		return notWritten, errCannotReplace
	}
	if err != nil {
		return notWritten, err
	}
	renamed := false
	defer func() {
		if !renamed {
			// The write failed and says why; a temporary file left over
			// is hidden and not YAML, so no later run reads it.
			tmp.Close()
			_ = t.root.Remove(tmpName)
		}
	}()
	if err := fillReplacement(tmp, s, data); err != nil {
		return notWritten, err
	}
	if err := tmp.Close(); err != nil {
		return notWritten, err
	}
	if err := t.verifyUnchanged(s); err != nil {
		return notWritten, err
	}
	if err := t.root.Rename(tmpName, t.rel); err != nil {
		return notWritten, err
	}
	renamed = true
	if err := syncDir(t.root, dir); err != nil {
		return written, fmt.Errorf("was changed, but its directory could not be synced, so the change may not survive a crash: %w", err)
	}
	return written, nil
}

// fillReplacement writes the new content, with the old file's owner and
// mode, to disk. The owner comes first: chown clears set-id bits, and the
// mode carries none (only its permission bits), so that no rewrite can
// make a set-id file.
func fillReplacement(tmp *os.File, s fileSnapshot, data []byte) error {
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := keepOwner(tmp, s); err != nil {
		return err
	}
	if err := tmp.Chmod(s.perm); err != nil {
		return err
	}
	return syncFile(tmp)
}

// keepOwner gives tmp the owner and group of the file it replaces.
func keepOwner(tmp *os.File, s fileSnapshot) error {
	if s.uid == -1 && s.gid == -1 {
		return nil // the system has no owners
	}
	err := tmp.Chown(s.uid, s.gid)
	if errors.Is(err, fs.ErrPermission) {
		return errCannotReplace
	}
	return err
}

// syncDir makes a rename or a link in dir of root durable, through
// syncFile (which tests fail on purpose).
func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return syncFile(d)
}

// writeInPlace overwrites the file through the inode it had when it was
// read, and truncates it to the new length.
func (t namedFile) writeInPlace(s fileSnapshot, data []byte) (writeOutcome, error) {
	f, _, err := t.open(os.O_RDWR)
	if err != nil {
		return notWritten, err
	}
	defer f.Close()
	if err := sameAsRead(f, s); err != nil {
		return notWritten, err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return partlyWritten, err
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return partlyWritten, err
	}
	if err := syncFile(f); err != nil {
		return written, fmt.Errorf("was changed, but could not be synced, so the change may not survive a crash: %w", err)
	}
	return written, nil
}

func (t namedFile) verifyUnchanged(s fileSnapshot) error {
	f, _, err := t.open(os.O_RDONLY)
	if err != nil {
		return err
	}
	defer f.Close()
	return sameAsRead(f, s)
}

// sameAsRead fails with errChangedMeanwhile unless f is the inode s saw,
// of the same size, modification time and content. The content is read
// again because a quick second write can keep size and time. What is left
// is the moment between this check and the write, which no lock-free
// check can close.
func sameAsRead(f *os.File, s fileSnapshot) error {
	if testHookBeforeVerify != nil {
		testHookBeforeVerify(f.Name())
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	now := snapshotOf(info, nil)
	if now.id() != s.id() || now.size != s.size || !now.modTime.Equal(s.modTime) {
		return errChangedMeanwhile
	}
	h := sha256.New()
	n, err := io.Copy(h, io.NewSectionReader(f, 0, s.size+1))
	if err != nil {
		return err
	}
	if n != s.size || !bytes.Equal(h.Sum(nil), s.sum[:]) {
		return errChangedMeanwhile
	}
	return nil
}
