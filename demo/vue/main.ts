// The shared stylesheet, through Vite: a <link> to ../examples.css would leave the example's root.
import '../examples.css';
import { createApp } from 'vue';
import App from './App.vue';

const config = await (await fetch('/example-config.json')).json();
createApp(App, { config }).mount('#app');
