package client

// UploadQuery is the query of POST /v2/fs/upload and /v1/file/upload; the
// body is multipart/form-data with the fields path (before or after file) and file.
type UploadQuery struct {
	Path string `json:"path,omitempty" jsonschema:"target file (extension: instead of the path form field)"`
	User string `json:"user,omitempty" jsonschema:"account that owns a created file"`
	// ExpectedVersion guards a replacement as on write.
	ExpectedVersion string `json:"expected_version,omitempty" jsonschema:"extension: replace the file only if it still has this version (409 stale_version otherwise, nothing written)"`
}

// UploadResult is AIO's FileUploadResult plus the content version.
type UploadResult struct {
	FilePath     string `json:"file_path"`
	FileSize     int64  `json:"file_size"`
	Success      bool   `json:"success"`
	Version      string `json:"version,omitempty" jsonschema:"content hash of the stored file"`
	Created      bool   `json:"created"`
	UndoRecorded *bool  `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo cannot revert this change (the hint says why); absent when it can"`
}

// DownloadQuery is the query of GET/HEAD /v2/fs/download and /v1/file/download.
type DownloadQuery struct {
	Path         string `json:"path" jsonschema:"file to download"`
	ChangePolicy string `json:"change_policy,omitempty" jsonschema:"ignore (default): the opened file, also when its path is replaced, cut if a file with several hard links is rewritten in place; or abort: 409, or a cut transfer, when the file changes before or during the download"`
}

// TreeQuery is the query of GET and PUT /v2/fs/tree.
type TreeQuery struct {
	Path string `json:"path" jsonschema:"directory"`
	User string `json:"user,omitempty" jsonschema:"PUT: account that owns what is created"`
}

// TreeUploadResult is the data of PUT /v2/fs/tree.
type TreeUploadResult struct {
	Path    string `json:"path"`
	Entries int    `json:"entries" jsonschema:"archive members extracted (directories, files, links)"`
	Mode    string `json:"mode" jsonschema:"rename (destination was absent; the staged tree was renamed into place) or merge (merged into an existing directory as one transaction: every file or none)"`
	// UndoRecorded is false when no extracted file can be undone: a
	// rename (undo does not record a directory created whole), or a
	// merge that recorded none; the hint says why.
	UndoRecorded *bool `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo can revert none of the extraction (the hint says why)"`
	UndoFiles    int   `json:"undo_files,omitempty" jsonschema:"extension: merged files whose change POST /v2/fs/undo can revert (restoring a replaced file, removing an added one)"`
}

// CreateWatchRequest is the body of POST /v2/watch and /v1/file/watch.
type CreateWatchRequest struct {
	Path            string    `json:"path" jsonschema:"file or directory to watch"`
	Recursive       *bool     `json:"recursive,omitempty" jsonschema:"watch the whole tree (default true)"`
	Debounce        *int      `json:"debounce,omitempty" jsonschema:"milliseconds, 50 to 5000 (default 300)"`
	Exclude         *[]string `json:"exclude,omitempty" jsonschema:"globs matched against each path component; replaces the default list"`
	IncludePatterns []string  `json:"include_patterns,omitempty" jsonschema:"globs on the file name or relative path; empty keeps everything"`
}

// WatcherCreated is AIO's WatcherCreatedResult.
type WatcherCreated struct {
	WatcherID     string  `json:"watcher_id"`
	Path          string  `json:"path"`
	Status        string  `json:"status"`
	CreatedAt     float64 `json:"created_at" jsonschema:"epoch seconds"`
	Reused        bool    `json:"reused" jsonschema:"an identical watcher existed and gained a subscriber"`
	InitialCursor int64   `json:"initial_cursor" jsonschema:"poll from here to see only new events"`
}

// WatcherInfo is one entry of GET /v2/watch.
type WatcherInfo struct {
	WatcherID       string  `json:"watcher_id"`
	Path            string  `json:"path"`
	Recursive       bool    `json:"recursive"`
	Status          string  `json:"status" jsonschema:"active, or stopped (listed until its last events are read, for at most 5 minutes)"`
	StopReason      string  `json:"stop_reason,omitempty" jsonschema:"why a stopped watcher stopped (fsplane; not in AIO)"`
	SubscriberCount int     `json:"subscriber_count"`
	EventCount      int64   `json:"event_count"`
	LatestSeq       int64   `json:"latest_seq"`
	CreatedAt       float64 `json:"created_at"`
	Unwatched       int     `json:"unwatched,omitempty" jsonschema:"directories left unwatched for want of inotify watches (see PollResult; fsplane; not in AIO)"`
}

// PollQuery is GET /v2/watch/{id}/poll's query (and, as PollRequest, the
// body of POST /v1/file/watch/{id}/poll).
type PollQuery struct {
	Cursor  *int64   `json:"cursor,omitempty" jsonschema:"last consumed seq; events with a higher seq are returned (default 0: replay the buffer)"`
	Limit   *int     `json:"limit,omitempty" jsonschema:"1 to 1000 (default 100)"`
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"seconds to wait for a first event, 0 to 60 (default 0)"`
}

// PollRequest is POST /v1/file/watch/{id}/poll's body.
type PollRequest = PollQuery

// WatchEvent is AIO's FileWatchEvent.
type WatchEvent struct {
	Seq          int64    `json:"seq"`
	Type         string   `json:"type" jsonschema:"create, write, remove, rename or chmod"`
	Path         string   `json:"path"`
	IsDir        bool     `json:"is_dir"`
	Timestamp    float64  `json:"timestamp" jsonschema:"epoch seconds"`
	RelativePath *string  `json:"relative_path"`
	OldPath      *string  `json:"old_path" jsonschema:"a rename's previous path"`
	Mtime        *float64 `json:"mtime"`
	Size         *int64   `json:"size"`
	Inode        *uint64  `json:"inode"`
}

// PollResult is AIO's PollWatchResult.
type PollResult struct {
	Events    []WatchEvent `json:"events"`
	Cursor    int64        `json:"cursor" jsonschema:"pass back unchanged as the next cursor"`
	Overflow  bool         `json:"overflow" jsonschema:"events were dropped: rescan the tree"`
	Unwatched int          `json:"unwatched,omitempty" jsonschema:"directories of the tree that exist but are not watched, the inotify watches being spent: nothing below them is reported until they are, with another overflow (fsplane; not in AIO)"`
}

// WatcherStopped is the data of DELETE /v2/watch/{id}.
type WatcherStopped struct {
	WatcherID       string `json:"watcher_id"`
	Status          string `json:"status" jsonschema:"stopped, or active while other subscribers remain"`
	SubscriberCount int    `json:"subscriber_count"`
}

// WaitRequest is POST /v1/file/watch/wait's body.
type WaitRequest struct {
	Path       string   `json:"path" jsonschema:"exact file or directory path"`
	Timeout    *float64 `json:"timeout,omitempty" jsonschema:"seconds, 1 to 300 (default 30)"`
	EventTypes []string `json:"event_types,omitempty" jsonschema:"default: all five types"`
}

// WaitResult is the data of POST /v1/file/watch/wait.
type WaitResult struct {
	Event WatchEvent `json:"event"`
}
