// The web console's entry: styles, then the app into #app.
import { render } from 'preact';
import './styles.css';
import { App } from './app';

render(<App />, document.getElementById('app') as HTMLElement);
