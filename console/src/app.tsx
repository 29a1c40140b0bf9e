// The console's shell: sign-in until a key is given, then the navigation and the page the hash
// names. A 401 from any page (a revoked key) signs out.
import { useState } from 'preact/hooks';
import { signedIn, signOut } from './lib/api';
import { href, useRoute, type Route } from './lib/router';
import { SignIn } from './pages/sign-in';
import { TasksPage } from './pages/tasks';
import { TaskPage } from './pages/task';
import { PlaygroundPage } from './pages/playground';
import { SessionsPage } from './pages/sessions';
import { SessionPage } from './pages/session';
import { SchedulesPage } from './pages/schedules';
import { DatastoresPage } from './pages/datastores';
import { DatastorePage } from './pages/datastore';

const NAV: [Route['page'], string, string][] = [
  ['tasks', 'Tasks', href('tasks')],
  ['sessions', 'Sessions', href('sessions')],
  ['schedules', 'Schedules', href('schedules')],
  ['datastores', 'Datastores', href('datastores')],
  ['playground', 'Playground', href('playground')],
];

const SECTION: Record<Route['page'], Route['page']> = {
  tasks: 'tasks',
  task: 'tasks',
  sessions: 'sessions',
  session: 'sessions',
  schedules: 'schedules',
  datastores: 'datastores',
  datastore: 'datastores',
  playground: 'playground',
};

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'tasks':
      return <TasksPage query={route.query} />;
    case 'task':
      return <TaskPage id={route.id} />;
    case 'sessions':
      return <SessionsPage />;
    case 'session':
      return <SessionPage id={route.id} />;
    case 'schedules':
      return <SchedulesPage />;
    case 'datastores':
      return <DatastoresPage />;
    case 'datastore':
      return <DatastorePage id={route.id} />;
    case 'playground':
      return <PlaygroundPage />;
  }
}

export function App() {
  const [authed, setAuthed] = useState(signedIn());
  const route = useRoute();
  if (!authed) return <SignIn onSignedIn={() => setAuthed(true)} />;
  const section = SECTION[route.page];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Agent console</span>
        <nav aria-label="Sections">
          {NAV.map(([page, label, to]) => (
            <a key={page} href={to} aria-current={section === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <button
          type="button"
          class="link"
          onClick={() => {
            signOut();
            setAuthed(false);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}
