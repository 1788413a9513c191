export type Feature = {
  /** Stable id, used for React keys and test ids. */
  id: string;
  title: string;
  description: string;
};

type FeatureListProps = {
  features: readonly Feature[];
  status: 'ready' | 'planned';
  testId: string;
};

export function FeatureList({ features, status, testId }: FeatureListProps) {
  return (
    <ul className="feature-list" data-testid={testId}>
      {features.map((feature) => (
        <li key={feature.id} className="feature" data-testid={`feature-${feature.id}`}>
          <span className={`badge badge-${status}`}>{status === 'ready' ? 'Works now' : 'Next'}</span>
          <div>
            <h3 className="feature-title">{feature.title}</h3>
            <p className="feature-description">{feature.description}</p>
          </div>
        </li>
      ))}
    </ul>
  );
}
