package a2a

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/mnemo-dev/mnemo/server"
)

// taskStore keeps tasks in memory, bounded (the oldest go first), each
// readable only by the principal that created it: another key asking for
// its id gets "task not found", as for an id that never existed. Tasks are
// stored as JSON so no caller shares a task's memory with the store.
// A task lives in the process that ran it: behind a load balancer, route
// tasks/get to the replica that answered message/send (or use
// message/send's blocking answer, which carries the whole task).
type taskStore struct {
	mu    sync.Mutex
	max   int
	tasks map[a2a.TaskID]storedTask
	order []a2a.TaskID
}

type storedTask struct {
	owner string
	task  []byte
}

func newTaskStore(max int) *taskStore {
	return &taskStore{max: max, tasks: map[a2a.TaskID]storedTask{}}
}

func owner(ctx context.Context) string {
	p, ok := server.PrincipalFrom(ctx)
	if !ok {
		return ""
	}
	return p.Scope.TenantID + "\x00" + p.ID + "\x00" + p.UserID
}

func (s *taskStore) Save(ctx context.Context, t *a2a.Task) error {
	who := owner(ctx)
	if who == "" {
		return a2a.ErrTaskNotFound // no principal: the handler always sets one
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.tasks[t.ID]; ok {
		if old.owner != who {
			return a2a.ErrTaskNotFound
		}
	} else {
		s.order = append(s.order, t.ID)
		for len(s.order) > s.max {
			delete(s.tasks, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.tasks[t.ID] = storedTask{owner: who, task: raw}
	return nil
}

func (s *taskStore) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	who := owner(ctx)
	s.mu.Lock()
	st, ok := s.tasks[id]
	s.mu.Unlock()
	if !ok || who == "" || st.owner != who {
		return nil, a2a.ErrTaskNotFound
	}
	var t a2a.Task
	if err := json.Unmarshal(st.task, &t); err != nil {
		return nil, err
	}
	return &t, nil
}
