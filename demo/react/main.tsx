// The shared stylesheet, through Vite: a <link> to ../examples.css would leave the example's root.
import '../examples.css';
import { createRoot } from 'react-dom/client';
import { App, type ExampleConfig } from './App.tsx';

const config = (await (await fetch('/example-config.json')).json()) as ExampleConfig;
createRoot(document.getElementById('root')!).render(<App config={config} />);
