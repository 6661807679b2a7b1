// GraphiQL's "Sign in with your organisation" (shown when the server names an identity provider); the token bar's
// Forget also ends the refreshing.
import { finishSignIn, organisation, signInWithOrganisation, signOut } from "./sign-in.js";

const button = document.getElementById("organisation");
organisation().then((org) => { button.hidden = !org; }).catch(() => {});
button.addEventListener("click", () => signInWithOrganisation("/graphql"));
document.getElementById("forget").addEventListener("click", signOut);
finishSignIn();
