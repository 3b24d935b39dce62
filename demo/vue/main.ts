import { createApp } from 'vue';
import App from './App.vue';

const config = await (await fetch('/example-config.json')).json();
createApp(App, { config }).mount('#app');
